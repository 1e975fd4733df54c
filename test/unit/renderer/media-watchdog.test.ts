import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MediaWatchdog, MEDIA_WATCHDOG_TIMING, type WatchdogAction } from '../../../renderer/src/call/media-watchdog.ts';
import type { CallMode } from '../../../electron/contract.ts';

/** A watchdog on a hand-moved clock; `at(ms)` moves the clock there and ticks, recording [ms, action]. */
function rig(mode: CallMode = 'video') {
  let now = 1_000_000;
  const start = now;
  const seen: Array<[number, WatchdogAction]> = [];
  const dog = new MediaWatchdog({ mode, now: () => now, emit: (a) => seen.push([now - start, a]) });
  return {
    dog,
    seen,
    at(ms: number) {
      now = start + ms;
      dog.tick();
    },
    frameAt(ms: number, kind: 'video' | 'audio' = 'video') {
      now = start + ms;
      dog.media(kind);
    },
  };
}

describe('media watchdog', () => {
  it('uses 8 s and 20 s by default', () => {
    assert.deepEqual({ ...MEDIA_WATCHDOG_TIMING }, { noticeMs: 8_000, hangupMs: 20_000 });
  });

  it('a frozen video call: notice and ONE resubscribe at 8 s, hang-up at 20 s, nothing after', () => {
    const r = rig('video');
    r.dog.live();
    for (let ms = 0; ms <= 30_000; ms += 250) r.at(ms);
    assert.deepEqual(r.seen, [
      [8_000, 'notice'],
      [8_000, 'resubscribe'],
      [20_000, 'hangup'],
    ]);
    assert.equal(r.dog.phase, 'done');
  });

  it('counts from the last frame: frames until 5 s, frozen after → notice at 13 s, hang-up at 25 s', () => {
    const r = rig('video');
    r.dog.live();
    for (let ms = 0; ms <= 5_000; ms += 40) r.frameAt(ms);
    for (let ms = 5_000; ms <= 26_000; ms += 100) r.at(ms);
    assert.deepEqual(r.seen, [
      [13_000, 'notice'],
      [13_000, 'resubscribe'],
      [25_000, 'hangup'],
    ]);
  });

  it('frames back before 20 s clear the notice; a second stall re-subscribes again, the call is never hung up', () => {
    const r = rig('video');
    r.dog.live();
    r.at(7_999);
    assert.deepEqual(r.seen, []);
    r.at(8_000);
    r.at(15_000);
    r.frameAt(15_500);
    r.frameAt(15_540); // steady frames: only one clear
    r.at(19_999);
    r.at(20_000); // would have hung up without the recovery
    r.at(23_539);
    r.at(23_540); // 8 s after the last frame: a new stall
    r.frameAt(24_000);
    r.at(31_999);
    r.at(32_000);
    r.at(43_999); // 19.999 s after the last frame: still only the notice
    assert.deepEqual(r.seen, [
      [8_000, 'notice'],
      [8_000, 'resubscribe'],
      [15_500, 'clear'],
      [23_540, 'notice'],
      [23_540, 'resubscribe'],
      [24_000, 'clear'],
      [32_000, 'notice'],
      [32_000, 'resubscribe'],
    ]);
    assert.equal(r.dog.phase, 'stalled');
  });

  it('a voice-only call is watched on audio: video observations do not keep it alive, audio does', () => {
    const r = rig('audio');
    r.dog.live();
    for (let ms = 0; ms <= 10_000; ms += 500) {
      r.frameAt(ms, 'video');
      r.at(ms);
    }
    r.frameAt(11_000, 'audio');
    for (let ms = 11_000; ms <= 31_000; ms += 1_000) r.at(ms);
    assert.deepEqual(r.seen, [
      [8_000, 'notice'],
      [8_000, 'resubscribe'],
      [11_000, 'clear'],
      [19_000, 'notice'],
      [19_000, 'resubscribe'],
      [31_000, 'hangup'],
    ]);
  });

  it('a video call is not kept alive by audio alone', () => {
    const r = rig('video');
    r.dog.live();
    for (let ms = 0; ms <= 21_000; ms += 500) {
      r.frameAt(ms, 'audio');
      r.at(ms);
    }
    assert.deepEqual(r.seen, [
      [8_000, 'notice'],
      [8_000, 'resubscribe'],
      [20_000, 'hangup'],
    ]);
  });

  it('nothing counts before live: a long wait before the call goes live is not a stall', () => {
    const r = rig('video');
    for (let ms = 0; ms <= 60_000; ms += 1_000) r.at(ms); // warming up: no frames, no live
    assert.deepEqual(r.seen, []);
    assert.equal(r.dog.phase, 'off');
    r.dog.live(); // the clock starts at 60 s
    r.at(67_999);
    assert.deepEqual(r.seen, []);
    r.at(68_000);
    r.at(80_000);
    assert.deepEqual(r.seen, [
      [68_000, 'notice'],
      [68_000, 'resubscribe'],
      [80_000, 'hangup'],
    ]);
  });

  it('stop() ends the watch: no hang-up for a call that already ended', () => {
    const r = rig('video');
    r.dog.live();
    r.at(9_000);
    r.dog.stop();
    r.frameAt(9_500);
    r.at(30_000);
    assert.deepEqual(r.seen, [
      [9_000, 'notice'],
      [9_000, 'resubscribe'],
    ]);
  });

  it('shortened timing (the E2E) keeps the same sequence', () => {
    let now = 0;
    const seen: Array<[number, WatchdogAction]> = [];
    const dog = new MediaWatchdog({ mode: 'video', now: () => now, emit: (a) => seen.push([now, a]), timing: { noticeMs: 1_500, hangupMs: 4_000 } });
    dog.live();
    for (now = 0; now <= 5_000; now += 100) dog.tick();
    assert.deepEqual(seen, [
      [1_500, 'notice'],
      [1_500, 'resubscribe'],
      [4_000, 'hangup'],
    ]);
  });

  it('refuses a timing whose hang-up does not come after the notice', () => {
    assert.throws(() => new MediaWatchdog({ mode: 'video', now: () => 0, emit: () => {}, timing: { noticeMs: 5_000, hangupMs: 5_000 } }), RangeError);
    assert.throws(() => new MediaWatchdog({ mode: 'video', now: () => 0, emit: () => {}, timing: { noticeMs: 0, hangupMs: 5_000 } }), RangeError);
  });
});

describe('the emulator\'s test-only freeze knob (carried in its RTC token)', () => {
  it('round-trips join and freeze, and a token without a freeze never freezes', async () => {
    const { emulatorRtcToken, demoFreezeAfterMs, demoJoinDelayMs } = await import('../../../electron/core/rtc-ids.ts');
    const plain = emulatorRtcToken(400, 'f123-abc');
    assert.equal(plain, 'emu-rtc-j400-f123-abc');
    assert.deepEqual([demoJoinDelayMs(plain), demoFreezeAfterMs(plain)], [400, null], 'a random part that looks like a freeze is not one');
    const frozen = emulatorRtcToken(0, 'xyz', 1_500);
    assert.equal(frozen, 'emu-rtc-j0f1500-xyz');
    assert.deepEqual([demoJoinDelayMs(frozen), demoFreezeAfterMs(frozen)], [0, 1_500]);
    assert.deepEqual([demoJoinDelayMs('007-real-token'), demoFreezeAfterMs('007-real-token')], [0, null]);
  });
});
