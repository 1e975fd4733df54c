/**
 * The renderer's voice activity detector (renderer/src/sensing/voice-activity.ts) on a fake clock with a
 * scripted level source, and its WebAudio level source against a fake AnalyserNode.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import {
  EnergyVoiceActivity,
  analyserLevelSource,
  meterLevel,
  toDbfs,
  type AnalyserLike,
  type AudioContextLike,
  type LevelSource,
} from '../../../renderer/src/sensing/voice-activity.ts';

/** RMS for a level in dBFS. */
const rmsAt = (dbfs: number): number => 10 ** (dbfs / 20);

class ScriptedSource implements LevelSource {
  dbfs = -90;
  closed = 0;
  reads = 0;
  readRms(): number {
    this.reads++;
    return rmsAt(this.dbfs);
  }
  close(): void {
    this.closed++;
  }
}

function detector(options: ConstructorParameters<typeof EnergyVoiceActivity>[1] = {}) {
  const clock = new FakeClock(0);
  const source = new ScriptedSource();
  const vad = new EnergyVoiceActivity(source, { startDbfs: -45, stopDbfs: -52, startHoldMs: 150, stopHoldMs: 900, sampleMs: 50, ...options }, clock);
  const changes: Array<{ atMs: number; value: boolean | null }> = [];
  vad.onChange((value) => changes.push({ atMs: clock.now(), value }));
  return { clock, source, vad, changes };
}

describe('EnergyVoiceActivity', () => {
  it('is unknown before the first sample, then silent on room noise', async () => {
    const { clock, vad, changes } = detector();
    assert.equal(vad.value, null);
    await clock.advance(49);
    assert.equal(vad.value, null);
    await clock.advance(1);
    assert.equal(vad.value, false);
    await clock.advance(5_000);
    assert.deepEqual(changes, [{ atMs: 50, value: false }]);
  });

  it('starts speech only after the level has stayed above the start threshold for the hold time', async () => {
    const { clock, source, vad, changes } = detector();
    await clock.advance(50); // silent
    source.dbfs = -30;
    await clock.advance(100); // samples at 100, 150: above since 100, held 50 ms
    assert.equal(vad.value, false);
    await clock.advance(100); // 200, 250: held 150 ms at 250
    assert.deepEqual(changes, [
      { atMs: 50, value: false },
      { atMs: 250, value: true },
    ]);
  });

  it('ignores a click shorter than the start hold', async () => {
    const { clock, source, changes } = detector();
    await clock.advance(50);
    source.dbfs = -20;
    await clock.advance(100); // 100, 150 loud
    source.dbfs = -90;
    await clock.advance(50); // 200 quiet: the count restarts
    source.dbfs = -20;
    await clock.advance(100); // 250, 300 loud again: held 50 ms
    assert.deepEqual(changes.map((c) => c.value), [false]);
  });

  it('keeps speaking through pauses shorter than the stop hold and inside the hysteresis band', async () => {
    const { clock, source, vad, changes } = detector();
    source.dbfs = -30;
    await clock.advance(250); // speaking at 200 (above since 50)
    assert.equal(vad.value, true);
    source.dbfs = -48; // between stop (−52) and start (−45): still speech
    await clock.advance(3_000);
    assert.equal(vad.value, true);
    source.dbfs = -70;
    await clock.advance(850); // samples 3300 … 4100: below since 3300, held 800 ms < 900 ms
    assert.equal(vad.value, true);
    source.dbfs = -30; // a word again: the pause resets
    await clock.advance(50); // 4150
    source.dbfs = -70;
    await clock.advance(900); // below since 4200 … 5050: held 850 ms
    assert.equal(vad.value, true);
    await clock.advance(50); // 5100: held 900 ms
    assert.deepEqual(changes, [
      { atMs: 50, value: false },
      { atMs: 200, value: true },
      { atMs: 5100, value: false },
    ]);
  });

  it('maps levels onto the meter and treats a failing or NaN read as silence', async () => {
    assert.equal(meterLevel(-60), 0);
    assert.equal(meterLevel(-30), 0.5);
    assert.equal(meterLevel(6), 1);
    assert.equal(toDbfs(0), -100);
    assert.ok(Math.abs(toDbfs(0.1) - -20) < 1e-9);
    const clock = new FakeClock(0);
    let mode: 'throw' | 'nan' | 'loud' = 'loud';
    const source: LevelSource = {
      readRms: () => {
        if (mode === 'throw') throw new Error('graph closed');
        return mode === 'nan' ? Number.NaN : rmsAt(-30);
      },
      close: () => undefined,
    };
    const vad = new EnergyVoiceActivity(source, { sampleMs: 50, startHoldMs: 0, stopHoldMs: 0 }, clock);
    await clock.advance(50);
    assert.equal(vad.value, true);
    assert.equal(vad.level, 0.5);
    mode = 'throw';
    await clock.advance(50);
    assert.equal(vad.value, false);
    assert.equal(vad.level, 0);
    mode = 'nan';
    await clock.advance(50);
    assert.equal(vad.value, false);
    vad.stop();
  });

  it('stop() releases the source once, reports unknown, and leaves no timer', async () => {
    const { clock, source, vad, changes } = detector();
    source.dbfs = -30;
    await clock.advance(300);
    vad.stop();
    vad.stop();
    assert.equal(source.closed, 1);
    assert.equal(vad.value, null);
    assert.equal(clock.pendingCount, 0);
    const reads = source.reads;
    await clock.advance(1_000);
    assert.equal(source.reads, reads);
    assert.deepEqual(changes.map((c) => c.value), [false, true, null]);
  });

  it('refuses a stop threshold above the start threshold', () => {
    assert.throws(() => new EnergyVoiceActivity(new ScriptedSource(), { startDbfs: -50, stopDbfs: -40 }, new FakeClock(0)), RangeError);
  });
});

describe('analyserLevelSource', () => {
  function fakeContext(fill: (samples: Float32Array) => void) {
    const log: string[] = [];
    const analyser: AnalyserLike = {
      fftSize: 0,
      smoothingTimeConstant: 1,
      getFloatTimeDomainData(array) {
        fill(array);
      },
    };
    const ctx: AudioContextLike = {
      createMediaStreamSource: () => ({
        connect: (node) => log.push(`connect:${node === analyser}`),
        disconnect: () => log.push('disconnect'),
      }),
      createAnalyser: () => analyser,
      resume: async () => {
        log.push('resume');
      },
      close: async () => {
        log.push('close');
      },
    };
    return { ctx, analyser, log };
  }

  it('reads the RMS of the time-domain window: a full-scale square wave is 1, a 0.5 sine is 0.354', () => {
    let wave: 'square' | 'sine' = 'square';
    const { ctx, analyser, log } = fakeContext((a) => {
      for (let i = 0; i < a.length; i++) a[i] = wave === 'square' ? (i % 2 ? 1 : -1) : 0.5 * Math.sin((2 * Math.PI * i) / 64);
    });
    const src = analyserLevelSource({} as MediaStream, ctx);
    assert.equal(analyser.fftSize, 2048);
    assert.equal(analyser.smoothingTimeConstant, 0);
    assert.equal(src.readRms(), 1);
    wave = 'sine';
    assert.ok(Math.abs(src.readRms() - 0.5 / Math.SQRT2) < 1e-6);
    src.close();
    src.close();
    assert.equal(src.readRms(), 0);
    assert.deepEqual(log, ['connect:true', 'resume', 'disconnect', 'close']);
  });
});
