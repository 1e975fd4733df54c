/**
 * MediaWatch (renderer/src/call/MediaWatch.svelte.ts), the page side of the media watchdog, on a fake
 * clock with a scripted engine: it reads the engine's counters every 250 ms, shows the notice, asks
 * for one re-subscription and hangs up. Compiled by the Svelte compiler as the build does.
 */
/// <reference types="svelte" />
import '../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../electron/core/clock.ts';
import type { RemoteMediaProgress } from '../../renderer/src/rtc/engine.ts';

const { MediaWatch, MEDIA_WATCH_POLL_MS } = await import('../../renderer/src/call/MediaWatch.svelte.ts');

function setup() {
  const clock = new FakeClock(0);
  let progress: RemoteMediaProgress | null = null;
  const log: string[] = [];
  const watch = new MediaWatch({
    clock,
    progress: () => progress,
    resubscribe: async () => void log.push(`resubscribe@${clock.now()}`),
    onHangup: () => log.push(`hangup@${clock.now()}`),
  });
  /** Advance in poll steps; `flowing` media grows the counters of that kind at every step. */
  const run = async (ms: number, flowing: 'video' | 'audio' | null) => {
    for (let t = 0; t < ms; t += MEDIA_WATCH_POLL_MS) {
      if (flowing) {
        const p = progress ?? { video: 0, audio: 0 };
        progress = { ...p, [flowing]: p[flowing] + 1 };
      }
      await clock.advance(MEDIA_WATCH_POLL_MS);
    }
  };
  return { clock, watch, log, run, setProgress: (p: RemoteMediaProgress | null) => (progress = p) };
}

describe('MediaWatch', () => {
  it('flowing frames: no notice; frozen: notice and one re-subscribe at 8 s, hang-up at 20 s, then it stops polling', async () => {
    const { clock, watch, log, run } = setup();
    watch.start('video');
    await run(5_000, 'video');
    assert.equal(watch.noticeShown, false);
    await run(7_750, null); // the last frame counted at 5 000 ms
    assert.deepEqual([watch.noticeShown, log], [false, []]);
    await run(250, null);
    assert.deepEqual([watch.noticeShown, log], [true, ['resubscribe@13000']]);
    await run(12_000, null);
    assert.deepEqual(log, ['resubscribe@13000', 'hangup@25000']);
    assert.deepEqual([watch.noticeShown, watch.endedCall, watch.isRunning, clock.pendingCount], [false, true, false, 0]);
  });

  it('frames coming back take the notice down and the call goes on', async () => {
    const { watch, log, run } = setup();
    watch.start('video');
    await run(1_000, 'video');
    await run(9_000, null);
    assert.equal(watch.noticeShown, true);
    await run(500, 'video');
    assert.equal(watch.noticeShown, false);
    await run(10_000, 'video');
    assert.deepEqual([log, watch.endedCall], [['resubscribe@9000'], false]);
    watch.stop();
  });

  it('a voice-only call is watched on the avatar\'s audio', async () => {
    const { watch, log, run } = setup();
    watch.start('audio');
    await run(21_000, 'video'); // a picture counter growing does not count in a voice-only call
    assert.deepEqual(log, ['resubscribe@8000', 'hangup@20000']);
  });

  it('stop() (the call left live) takes the notice down and never hangs up', async () => {
    const { clock, watch, log, run } = setup();
    watch.start('video');
    await run(9_000, null);
    assert.equal(watch.noticeShown, true);
    watch.stop();
    assert.deepEqual([watch.noticeShown, clock.pendingCount], [false, 0]);
    await clock.advance(30_000);
    assert.deepEqual(log, ['resubscribe@8000']);
  });
});
