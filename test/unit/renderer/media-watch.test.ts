/**
 * MediaWatch (renderer/src/call/MediaWatch.svelte.ts), the page side of the media watchdog, on a fake
 * clock with a scripted engine: it reads the engine's counters every 250 ms, shows the notice, asks
 * for one re-subscription and hangs up. Compiled by the Svelte compiler as the build does.
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import type { RemoteMediaProgress } from '../../../renderer/src/rtc/engine.ts';

const { MediaWatch, MEDIA_WATCH_POLL_MS } = await import('../../../renderer/src/call/MediaWatch.svelte.ts');

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

/**
 * The signals an engine reports of the media itself (what agora-rtc-sdk-ng's getRemoteVideoStats /
 * getRemoteAudioStats / getRTCStats and connectionState say, and what the demo engine models), scripted
 * per poll: each test drives one signal and checks what the watchdog decides.
 */
function scripted(step: (tMs: number) => RemoteMediaProgress) {
  const clock = new FakeClock(0);
  const log: string[] = [];
  const watch = new MediaWatch({
    clock,
    progress: () => step(clock.now()),
    resubscribe: async () => void log.push(`resubscribe@${clock.now()}`),
    onHangup: () => log.push(`hangup@${clock.now()}`),
  });
  const run = async (ms: number) => {
    for (let t = 0; t < ms; t += MEDIA_WATCH_POLL_MS) await clock.advance(MEDIA_WATCH_POLL_MS);
  };
  return { watch, log, run };
}

/** A healthy call at `tMs`: packets, frames decoded and rendered at 25 fps, no freeze, bytes arriving. */
function healthy(tMs: number): RemoteMediaProgress {
  const n = Math.floor(tMs / 40);
  return {
    video: n,
    audio: n,
    videoFrames: { decodeFps: 25, renderFps: 25, freezeMs: 0 },
    audioFreezeMs: 0,
    connection: { connected: true, bytesReceived: n * 5_000 },
  };
}

describe('MediaWatch judges the media, not the packets', () => {
  it('video: packets still arriving but nothing decoded or rendered (a stalled decoder) → notice at 8 s, hang-up at 20 s', async () => {
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), videoFrames: { decodeFps: 0, renderFps: 0, freezeMs: 0 } }));
    watch.start('video');
    await run(21_000);
    assert.deepEqual(log, ['resubscribe@8000', 'hangup@20000']);
  });

  it('video: frame rates still reported but the freeze time grows with the clock (a frozen picture) → hang-up', async () => {
    // The SDK moves totalFreezeTime in whole seconds.
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), videoFrames: { decodeFps: 25, renderFps: 25, freezeMs: Math.floor(t / 1000) * 1000 } }));
    watch.start('video');
    await run(23_000);
    // Judged over a 2 s window: the freeze is certain from 1.75 s on (notice 8 s later, hang-up 20 s later).
    assert.deepEqual(log, ['resubscribe@9750', 'hangup@21750']);
  });

  it('video: short freezes now and then (under the window) do not end the call', async () => {
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), videoFrames: { decodeFps: 25, renderFps: 25, freezeMs: Math.floor(t / 5_000) * 400 } }));
    watch.start('video');
    await run(30_000);
    assert.deepEqual(log, []);
    watch.stop();
  });

  it('video: the connection down (state not connected) while frames are still reported → hang-up', async () => {
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), connection: { connected: false, bytesReceived: Math.floor(t / 40) * 5_000 } }));
    watch.start('video');
    await run(21_000);
    assert.deepEqual(log, ['resubscribe@8000', 'hangup@20000']);
  });

  it('video: the avatar\'s voice freezing (gaps while it speaks) while its picture is fine → hang-up', async () => {
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), audioFreezeMs: Math.floor(t / 1000) * 1000 }));
    watch.start('video');
    await run(23_000);
    assert.deepEqual(log, ['resubscribe@9750', 'hangup@21750']);
  });

  it('voice-only: the avatar silent for a minute (no audio packets) while the connection carries bytes is NOT hung up', async () => {
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), audio: 7, videoFrames: null }));
    watch.start('audio');
    await run(60_000);
    assert.deepEqual(log, [], 'silence is not a stall');
    watch.stop();
  });

  it('voice-only: no bytes arriving on the connection any more → notice at 8 s, hang-up at 20 s', async () => {
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), audio: 7, connection: { connected: true, bytesReceived: 1_000 } }));
    watch.start('audio');
    await run(21_000);
    assert.deepEqual(log, ['resubscribe@8000', 'hangup@20000']);
  });

  it('voice-only: the connection not connected → hang-up', async () => {
    const { watch, log, run } = scripted((t) => ({ ...healthy(t), connection: { connected: false, bytesReceived: t } }));
    watch.start('audio');
    await run(21_000);
    assert.deepEqual(log, ['resubscribe@8000', 'hangup@20000']);
  });
});
