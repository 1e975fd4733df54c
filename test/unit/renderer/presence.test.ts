/**
 * Presence from the camera (renderer/src/sensing/presence-core.ts), on generated 160×120 grey frames at
 * 5 fps (the same scenes as the fake-camera videos of the approach E2E): nobody in an empty room or among
 * people walking past, "someone approached" about a second after a person stops in the middle, "nobody"
 * a configured time after they leave, and the hysteresis's exact timing on hand-written candidates.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { approachScene, emptyScene, passersByScene, renderFrames, standing, type Scene } from '../../e2e/fake-camera.ts';
import { BackgroundModel, PresenceHysteresis } from '../../../renderer/src/sensing/presence-core.ts';

/** Runs a scene through the model and hysteresis; returns every change of value as [seconds, value]. */
function changes(scene: Scene, durationS: number, nobodyMs = 20_000): Array<[number, boolean]> {
  const model = new BackgroundModel(160, 120);
  const hysteresis = new PresenceHysteresis({ nobodyMs });
  const out: Array<[number, boolean]> = [];
  let last: boolean | null = null;
  for (const { tS, luma } of renderFrames({ width: 160, height: 120, fps: 5, durationS, scene })) {
    const value = hysteresis.push(model.update(luma, tS * 1000).candidate, tS * 1000);
    if (value !== last) out.push([Number(tS.toFixed(1)), value]);
    last = value;
  }
  return out;
}

describe('Presence from the camera', () => {
  describe('with nobody stopping in front of the kiosk', () => {
    it('stays "nobody" in an empty room with sensor noise and drifting light', () => {
      assert.deepEqual(changes(emptyScene, 40), [[0, false]]);
    });

    it('stays "nobody" while people walk past, near and far, and linger at the edges', () => {
      assert.deepEqual(changes(passersByScene(), 30), [[0, false]]);
    });
  });

  describe('when a person walks in and stops in the middle', () => {
    it('says "someone approached" about a second after they stand there (entering at 3 s, stopping at 4.2 s)', () => {
      assert.deepEqual(changes(approachScene(3), 12), [
        [0, false],
        [5, true],
      ]);
    });

    it('says "nobody" the configured time after they leave (5 s here), not before', () => {
      const enterThenLeave: Scene = (t) => (t < 8 ? approachScene(3)(t) : []);
      assert.deepEqual(changes(enterThenLeave, 20, 5_000), [
        [0, false],
        [5, true],
        [12.8, false], // the last frame with them in view is at 7.8 s; + 5 s
      ]);
    });

    it('keeps them present while they stand almost still for a minute', () => {
      const stay: Scene = (t) => (t < 2 ? [] : [standing(0.5, t)]);
      assert.deepEqual(changes(stay, 70), [
        [0, false],
        [3, true],
      ]);
    });
  });

  it('takes an object that never moves for furniture after a minute, and forgets it', () => {
    const model = new BackgroundModel(4, 4, {
      foregroundThreshold: 20,
      centreShare: 0.5,
      centreX: [0, 1],
      centreY: [0, 1],
      backgroundRate: 0.05,
      foregroundRate: 0,
      staticAbsorbMs: 60_000,
      motionThreshold: 10,
      motionShare: 0.05,
    });
    const room = new Uint8Array(16).fill(100);
    const chair = new Uint8Array(16).fill(30);
    assert.equal(model.update(room, 0).candidate, false);
    const readings: boolean[] = [];
    for (let t = 200; t <= 60_400; t += 200) readings.push(model.update(chair, t).candidate);
    // Present from the first chair frame; still from 400 ms on (the first chair frame itself moved), so
    // absorbed into the background at 60.4 s.
    assert.equal(readings.length, 302);
    assert.deepEqual(readings.slice(0, -1), new Array(301).fill(true));
    assert.equal(readings.at(-1), false);
    assert.equal(model.update(chair, 60_600).candidate, false);
  });

  it('refuses a frame of the wrong size', () => {
    assert.throws(() => new BackgroundModel(160, 120).update(new Uint8Array(10), 0), RangeError);
  });
});

describe('PresenceHysteresis', () => {
  const run = (h: PresenceHysteresis, frames: Array<[number, boolean]>) => frames.map(([t, c]) => h.push(c, t));

  it('is null before the first frame, then false', () => {
    const h = new PresenceHysteresis();
    assert.equal(h.value, null);
    assert.deepEqual(run(h, [[0, false]]), [false]);
  });

  it('turns true once candidates are sustained for approachMs, tolerating one missed frame', () => {
    const h = new PresenceHysteresis({ approachMs: 1_000, gapToleranceMs: 450 });
    assert.deepEqual(
      run(h, [
        [0, true],
        [200, true],
        [400, false], // one missed frame: the run goes on
        [600, true],
        [800, true],
        [1_000, true],
      ]),
      [false, false, false, false, false, true],
    );
  });

  it('restarts the run after a longer gap', () => {
    const h = new PresenceHysteresis({ approachMs: 1_000, gapToleranceMs: 450 });
    assert.deepEqual(
      run(h, [
        [0, true],
        [200, true],
        [400, false],
        [600, false],
        [800, true], // 600 ms since the last candidate: a new run starts here
        [1_000, true],
        [1_200, true],
        [1_400, true],
        [1_600, true],
        [1_800, true],
      ]),
      [false, false, false, false, false, false, false, false, false, true],
    );
  });

  it('turns false nobodyMs after the last candidate, and a single flicker does not bring them back', () => {
    const h = new PresenceHysteresis({ approachMs: 0, nobodyMs: 20_000 });
    assert.deepEqual(
      run(h, [
        [0, true],
        [10_000, false],
        [19_999, false],
        [20_000, false],
      ]),
      [true, true, true, false],
    );
    const h2 = new PresenceHysteresis({ approachMs: 1_000, nobodyMs: 1_000 });
    const present: Array<[number, boolean]> = [0, 200, 400, 600, 800, 1_000].map((t) => [t, true]);
    assert.deepEqual(
      run(h2, [...present, [2_000, false], [2_200, true], [2_400, false], [2_600, false]]),
      [false, false, false, false, false, true, false, false, false, false],
    );
  });
});

describe('Presence during a video call (the idle hang-up)', () => {
  /** The attract screen learns the empty room for `learnS`; then a call's detector reads `scene` (its own
   *  hysteresis) with either that model or a fresh one. Returns every change of value as [call seconds, value]. */
  function callChanges(scene: Scene, durationS: number, options: { learnS: number; shareModel: boolean }): Array<[number, boolean]> {
    const room = new BackgroundModel(160, 120);
    for (const { tS, luma } of renderFrames({ width: 160, height: 120, fps: 5, durationS: options.learnS, scene: emptyScene })) room.update(luma, tS * 1000);
    const model = options.shareModel ? room : new BackgroundModel(160, 120);
    const hysteresis = new PresenceHysteresis({ nobodyMs: 4_000 });
    const out: Array<[number, boolean]> = [];
    let last: boolean | null = null;
    for (const { tS, luma } of renderFrames({ width: 160, height: 120, fps: 5, durationS, scene })) {
      const atMs = (options.learnS + tS) * 1000;
      const value = hysteresis.push(model.update(luma, atMs).candidate, atMs);
      if (value !== last) out.push([Number(tS.toFixed(1)), value]);
      last = value;
    }
    return out;
  }
  const visitorThenLeaves: Scene = (t) => (t < 20 ? [standing(0.5, t)] : []);

  it('continuing from the attract screen\'s room: the visitor is there from the first second, "nobody" once they leave', () => {
    assert.deepEqual(callChanges(visitorThenLeaves, 30, { learnS: 10, shareModel: true }), [
      [0, false],
      [1, true],
      [23.8, false], // last frame with the visitor at 19.8 s; + 4 s
    ]);
  });

  it('a fresh model would take the visitor standing there from the first frame for the room (why the model is handed over)', () => {
    const fresh = callChanges(visitorThenLeaves, 30, { learnS: 10, shareModel: false });
    assert.equal(fresh.some(([t, v]) => v && t < 20), false, `never present while the visitor is there: ${JSON.stringify(fresh)}`);
  });
});

