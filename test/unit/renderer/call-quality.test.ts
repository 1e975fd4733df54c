/**
 * The call-quality logic in the renderer: the visitor's "weak connection" hint (hysteresis on both
 * edges, exact sequences on an injected clock), the throttled report to main, the SDK's quality scale
 * in our words, and the clamping of figures to what main accepts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../../electron/contract.ts';
import { clampSample, levelFromAgora, QualityHint, QualityReporter, type QualitySample } from '../../../renderer/src/rtc/quality.ts';
import type { CallQualityLevel } from '../../../electron/contract.ts';

/** Feed `[atMs, level]` pairs; return the hint's visibility after each. */
function run(steps: Array<[number, CallQualityLevel]>, options?: { showAfterMs?: number; hideAfterMs?: number }): boolean[] {
  let now = 0;
  const hint = new QualityHint(() => now, options);
  return steps.map(([at, level]) => {
    now = at;
    return hint.sample(level);
  });
}

describe('QualityHint', () => {
  it('shows after 4 s of poor samples without a break, and hides after 4 s of better ones', () => {
    assert.deepEqual(
      run([[0, 'good'], [2000, 'poor'], [4000, 'poor'], [6000, 'poor'], [8000, 'poor'], [10000, 'good'], [12000, 'fair'], [14000, 'good'], [16000, 'good']]),
      [false, false, false, true, true, true, true, false, false],
    );
  });

  it('one good sample in a poor run starts the wait again; one poor sample never shows it', () => {
    assert.deepEqual(
      run([[0, 'poor'], [2000, 'poor'], [3000, 'good'], [4000, 'poor'], [6000, 'poor'], [7999, 'down'], [8000, 'poor']]),
      [false, false, false, false, false, false, true],
    );
    assert.deepEqual(run([[0, 'poor'], [2000, 'good'], [4000, 'good'], [100000, 'good']]), [false, false, false, false]);
  });

  it('one poor sample while shown restarts the wait to hide', () => {
    assert.deepEqual(
      run([[0, 'down'], [4000, 'down'], [6000, 'good'], [8000, 'poor'], [10000, 'good'], [13999, 'good'], [14000, 'good']]),
      [false, true, true, true, true, true, false],
    );
  });

  it('unknown neither starts nor breaks a run', () => {
    assert.deepEqual(run([[0, 'poor'], [2000, 'unknown'], [4000, 'poor']]), [false, false, true]);
    assert.deepEqual(run([[0, 'unknown'], [2000, 'unknown'], [4000, 'unknown'], [6000, 'poor']]), [false, false, false, false]);
    assert.deepEqual(run([[0, 'poor'], [4000, 'poor'], [5000, 'good'], [7000, 'unknown'], [9000, 'good']]), [false, true, true, true, false]);
  });

  it('honours other thresholds, and reset hides it', () => {
    assert.deepEqual(run([[0, 'poor'], [1000, 'poor'], [2000, 'good'], [2500, 'good']], { showAfterMs: 1000, hideAfterMs: 500 }), [false, true, true, false]);
    let now = 0;
    const hint = new QualityHint(() => now);
    hint.sample('poor');
    now = 4000;
    assert.equal(hint.sample('poor'), true);
    hint.reset();
    assert.equal(hint.visible, false);
    now = 5000;
    assert.equal(hint.sample('poor'), false, 'a reset starts a fresh run');
  });
});

const sample = (bitrateKbps: number, level: CallQualityLevel = 'good'): QualitySample => ({ bitrateKbps, packetLossPct: 0, frameRate: 25, rttMs: 40, level });

describe('QualityReporter', () => {
  it('sends the first sample at once, then at most one per interval, and the newest once more at the end', () => {
    let now = 0;
    const sent: Array<[number, number, boolean]> = [];
    const reporter = new QualityReporter(() => now, (s, final) => sent.push([now, s.bitrateKbps, final]), 2000);
    for (const [at, kbps] of [[0, 100], [500, 101], [1999, 102], [2000, 103], [3000, 104], [4500, 105]] as const) {
      now = at;
      reporter.sample(sample(kbps));
    }
    assert.equal(reporter.pending, false, 'the 4.5 s sample went out (2.5 s after the last)');
    now = 4600;
    reporter.sample(sample(106));
    assert.equal(reporter.pending, true);
    now = 5000;
    reporter.flush();
    assert.deepEqual(sent, [[0, 100, false], [2000, 103, false], [4500, 105, false], [5000, 106, true]]);
    reporter.flush();
    assert.equal(sent.length, 4, 'a second flush sends nothing');
  });

  it('sends nothing at the end of a call that never reported', () => {
    const sent: unknown[] = [];
    new QualityReporter(() => 0, (s) => sent.push(s)).flush();
    assert.deepEqual(sent, []);
  });
});

describe('levelFromAgora', () => {
  it("maps the SDK's 0-6 scale, the worse direction counting", () => {
    assert.deepEqual([[0, 0], [1, 1], [2, 1], [1, 3], [4, 2], [2, 5], [6, 1], [0, 3]].map(([u, d]) => levelFromAgora(u!, d!)), [
      'unknown', 'good', 'good', 'fair', 'poor', 'poor', 'down', 'fair',
    ]);
  });
});

describe('clampSample', () => {
  it('turns what an SDK may report before it has data into figures main accepts', () => {
    const s = clampSample({ bitrateKbps: Number.NaN, packetLossPct: 150, frameRate: -3, rttMs: Number.POSITIVE_INFINITY, level: 'unknown' });
    assert.deepEqual(s, { bitrateKbps: 0, packetLossPct: 100, frameRate: 0, rttMs: 0, level: 'unknown' });
    assert.equal(parseArgs('kiosk:session:report-quality', { liveId: 'l', ...s }).ok, true);
    assert.deepEqual(clampSample({ bitrateKbps: 981.6, packetLossPct: 0.1234, frameRate: 24.96, rttMs: 51.5, level: 'good' }), {
      bitrateKbps: 982, packetLossPct: 0.12, frameRate: 25, rttMs: 52, level: 'good',
    });
  });
});
