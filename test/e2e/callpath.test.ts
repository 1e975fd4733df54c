/**
 * The call path as it meets the network (E2E: built renderer + real kiosk service + emulator, demo engine
 * with the emulator's modelled channel join): a spare's channel is joined ahead of the tap but nothing is
 * captured or published before it, and conn_init reaches the service only once the renderer's side of the
 * channel is ready (RTC first, then billing).
 * Run: npm run build && node --import tsx --test test/e2e/callpath.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createKioskMetrics, kioskMetricsSource, startMetricsServer } from '../../electron/fleet/metrics.ts';
import { eventually, localTracks, openKiosk, screenIs, screenshot, useE2eBrowser } from './harness.ts';

const e2e = useE2eBrowser();

describe('Call path (E2E)', () => {
  it('pre-join captures nothing before the tap; the tap opens the devices, reports ready, and only then conn_init goes out', async () => {
    const k = await openKiosk({
      browser: e2e.browser,
      baseUrl: e2e.server.url,
      orientation: 'landscape',
      imageDataUrl: e2e.portrait,
      knobs: { warmupMs: { audio: 0, video: 0 }, rtcJoinMs: 400 },
      // A spare while the attract screen shows; no presence camera, so any capture would be the pre-join's.
      config: { prewarm: { mode: 'always', prejoin: true }, presence: { cameraEnabled: false } },
    });
    // The field figures reach /metrics: a real scrape of the metrics server observing this kiosk.
    const metrics = createKioskMetrics({ version: 'e2e' });
    const stopObserving = metrics.observe(kioskMetricsSource(k.kiosk));
    const server = await startMetricsServer({ metrics, host: '127.0.0.1', port: 0 });
    try {
      const { page } = k;
      await screenIs(page, 'attract', 15_000);
      await eventually(() => k.bridge.events.some((e) => e.type === 'spare' && e.status === 'created'), 'a spare session was created', 15_000);
      const spare = k.bridge.events.find((e) => e.type === 'spare' && e.status === 'created');
      assert.ok(spare?.type === 'spare' && spare.liveId && spare.rtc, 'the spare event carries its RTC credentials to the renderer');
      await eventually(
        async () => JSON.stringify(await page.evaluate('window.__rtcPreJoin ?? null')) === JSON.stringify({ liveId: spare.liveId, joined: true }),
        'the renderer joined the spare’s channel (receive-only)',
        5_000,
      );
      assert.deepEqual(await localTracks(page), { total: 0, live: 0, gumCalls: 0 }, 'no microphone or camera before the tap');
      assert.ok(!k.bridge.calls.some((c) => c.channel === 'kiosk:session:rtc-ready'), 'nothing reported before the tap');
      assert.equal(k.emulator.getSession(spare.liveId)!.connInits, 0);

      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 15_000);
      const ready = k.bridge.calls.find((c) => c.channel === 'kiosk:session:rtc-ready');
      assert.deepEqual(ready?.arg, { liveId: spare.liveId }, 'the tap took the pre-joined spare and reported its side ready');
      // The microphone is part of being ready; the camera may still be opening when the call goes live.
      const tracks = await eventually(async () => {
        const t = await localTracks(page);
        return t.live >= 2 ? t : null;
      }, 'the tap opened the microphone and the camera', 10_000);
      assert.ok(tracks.gumCalls >= 1, `the tap opened the devices (${JSON.stringify(tracks)})`);
      const session = k.emulator.getSession(spare.liveId)!;
      assert.equal(session.connInits, 1);
      assert.equal(session.socketsOpened, 1, 'conn_init on the spare’s own socket');
      assert.ok(k.bridge.events.some((e) => e.type === 'spare' && e.status === 'used' && e.liveId === spare.liveId));

      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended', 15_000);
      await eventually(() => k.emulator.liveCount() === 0, 'hung up');
      await eventually(async () => (await localTracks(page)).live === 0, 'devices released');

      // The call's field figures, from the engine's own events (the demo engine reports the same ones as
      // the Web SDK's): every milestone from the tap, in order, with the modelled join's own time.
      // Sent with the call's terminal state (after the final billing read, once the end screen shows).
      const figures = await eventually(() => k.kiosk.telemetry.lastCallFigures, 'the call recorded its field figures', 15_000);
      assert.equal(figures.liveId, spare.liveId);
      assert.equal(figures.callMode, 'video');
      assert.equal(figures.proxy, 'off');
      assert.equal(figures.endReason, 'user_end');
      assert.equal(figures.joinMs, 400, 'the modelled channel join (rtcJoinMs)');
      const { tapToRtcReadyMs: rtcReadyMs, tapToConnInitAckMs: ack, tapToAvatarPublishedMs: published, tapToFirstFrameMs: frame } = figures;
      assert.ok(rtcReadyMs !== null && ack !== null && published !== null && frame !== null, JSON.stringify(figures));
      assert.ok(rtcReadyMs <= ack, `RTC ready (${rtcReadyMs} ms) before the conn_init ack (${ack} ms)`);
      assert.ok(published <= frame, 'the avatar publishes before its first frame');
      assert.equal(figures.tapToFirstAudioMs, null, 'a video call reports its first frame, not first audio');

      const scrape = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      for (const metric of ['tap_to_rtc_ready', 'tap_to_conn_init_ack', 'tap_to_avatar_published', 'tap_to_first_frame', 'rtc_join']) {
        assert.match(scrape, new RegExp(`^avatar_kiosk_call_${metric}_seconds_count\\{call_mode="video",proxy="off"\\} 1$`, 'm'), `${metric} in the scrape`);
      }
      assert.match(scrape, /^avatar_kiosk_call_rtc_join_seconds_sum\{call_mode="video",proxy="off"\} 0\.4$/m);
    } finally {
      stopObserving();
      await server.close();
      await k.close();
    }
  });

  it('a microphone unplugged mid-call with none left: the visitor is told, and after the grace time the call ends with type 5 and an explained error', async () => {
    const k = await openKiosk({
      browser: e2e.browser,
      baseUrl: e2e.server.url,
      orientation: 'landscape',
      imageDataUrl: e2e.portrait,
      knobs: { warmupMs: { audio: 0, video: 0 }, rtcJoinMs: 0 },
      config: { callMode: 'audio' },
    });
    try {
      const { page } = k;
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 15_000);
      const liveId = k.emulator.listSessions()[0]!.id;
      // Unplug: no microphone can be opened any more, and the one in use ends.
      await page.evaluate(`(() => {
        navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('Requested device not found', 'NotFoundError'));
        for (const t of window.__localTracks) if (t.kind === 'audio' && t.readyState === 'live') { t.stop(); t.dispatchEvent(new Event('ended')); }
      })()`);
      await eventually(async () => /microphone was disconnected/i.test((await page.locator('body').textContent()) ?? ''), 'the visitor is told', 3_000);
      await screenshot(page, 'live-microphone-lost', 'landscape');
      assert.equal(k.emulator.getSession(liveId)!.status, 'on_live', 'still live during the grace time');
      await screenIs(page, 'error', 15_000);
      assert.equal(await page.getAttribute('[data-testid=screen-error]', 'data-cause'), 'media');
      const reported = k.bridge.calls.find((c) => c.channel === 'kiosk:session:report-media-error');
      assert.equal((reported?.arg as { kind: string } | undefined)?.kind, 'device_missing');
      await eventually(() => k.emulator.getSession(liveId)?.status === 'ended', 'main ended the call');
      const session = k.emulator.getSession(liveId)!;
      assert.equal(session.clientMessages.filter((m) => m.type === 5).length, 1, 'one type 5');
      assert.equal(k.emulator.liveCount(), 0);
    } finally {
      await k.close();
    }
  });
});
