/**
 * The visitor funnel through the real kiosk (createKiosk in demo mode, the real emulator over loopback),
 * driven through the channel registry IPC uses: a passer-by noticed who stops, taps refused while closed,
 * a cancel while connecting, a conversation the visitor ends, one that fails before live. The exact counts
 * are checked where they show: the staff report (staffVisitors), the /metrics text (and promtool's check),
 * the fleet status's day, the store file after a restart, and against the ledger's live sessions per hour.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHANNELS, type Result, type VisitorReport } from '../../electron/contract.ts';
import { systemClock } from '../../electron/core/clock.ts';
import { TINY_PNG, createStaffKiosk } from '../helpers/staff-kiosk.ts';
import { emptyFunnelCounts } from '../../electron/core/funnel.ts';
import { createKioskMetrics, kioskMetricsSource } from '../../electron/fleet/metrics.ts';
import { localHour, openVisitorFunnelStore } from '../../electron/kiosk/visitor-funnel-store.ts';
import { buildVisitorReport } from '../../electron/kiosk/visitor-funnel.ts';
import { isTerminal, phaseIs, waitForEvent } from '../helpers/kiosk-events.ts';

const TZ = 'Europe/Berlin';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function value<T>(r: unknown): T {
  const result = r as Result<T>;
  assert.equal(result.ok, true, JSON.stringify(result));
  return (result as { ok: true; value: T }).value;
}

describe('the visitor funnel on a running kiosk', () => {
  it('counts every branch exactly, shows it in the report, /metrics and the fleet day, and reconciles with the ledger', async () => {
    const { kiosk, channels, ops, dataDir: dir } = await createStaffKiosk({
      file: { callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } },
      // A short warm-up, so a visitor can cancel while the avatar gets ready.
      knobs: { warmupMs: { audio: 1_500, video: 1_500 } },
      platform: { getOpenAtLogin: () => null, setOpenAtLogin: () => {}, exitKiosk: () => {}, restart: () => {} },
      timeZone: TZ,
    });
    dirs.push(dir);
    const ledger = ops.ledger;
    const recorder = ops.recorder;
    const metrics = createKioskMetrics({ version: '0.0.0-test' });
    metrics.observe(kioskMetricsSource(kiosk));
    const d = channels.dispatch;
    try {
      // A kiosk takes calls once staff chose a PIN.
      value(await d(CHANNELS.staffSetPin, { pin: '246813' }));
      // A passer-by is noticed, greeted and stays; the page says it twice more at once (held back).
      const steps: boolean[] = [];
      for (const step of ['noticed', 'greeted', 'approached', 'noticed', 'approached'] as const) {
        steps.push(value<{ counted: boolean }>(await d(CHANNELS.attractVisitorStep, { step })).counted);
      }
      assert.deepEqual(steps, [true, true, true, false, false]);

      // Two taps while the kiosk is closed: refused, nothing created.
      kiosk.availability.setOpening({ open: false, nextOpenAt: null, timeZone: null });
      for (let i = 0; i < 2; i++) assert.equal((await d(CHANNELS.sessionStart, {})).ok, false);
      kiosk.availability.setOpening({ open: true, nextOpenAt: null, timeZone: null });

      // A tap, then the visitor cancels while the avatar warms up.
      const warming = waitForEvent(kiosk, phaseIs('warming'), 8_000);
      value(await d(CHANNELS.sessionStart, {}));
      await warming;
      let end = waitForEvent(kiosk, isTerminal, 8_000);
      value(await d(CHANNELS.sessionHangup, { cause: 'visitor' }));
      await end;

      // A conversation the visitor ends.
      const live = waitForEvent(kiosk, phaseIs('live'), 8_000);
      value(await d(CHANNELS.sessionStart, {}));
      await live;
      end = waitForEvent(kiosk, isTerminal, 8_000);
      value(await d(CHANNELS.sessionHangup, { cause: 'visitor' }));
      await end;

      // One that fails before live (the service refuses the connection).
      kiosk.connection.emulator!.knobs.initFailure = true;
      end = waitForEvent(kiosk, isTerminal, 8_000);
      await d(CHANNELS.sessionStart, {});
      const failed = await end;
      kiosk.connection.emulator!.knobs.initFailure = false;
      assert.equal(failed.type === 'state' && failed.state.phase, 'failed');
      await recorder.flush();

      const want = emptyFunnelCounts();
      Object.assign(want, { noticed: 1, approached: 1, greeted: 1, tapped: 5, gaveUp: 1, failed: 1, live: 1, endedWell: 1 });
      want.refused.closed = 2;
      want.callLength.under1m = 1;
      want.byLanguage = { en: { tapped: 3, live: 1 } };
      want.byCallMode = { audio: { tapped: 3, live: 1 } };
      want.byAvatar = { [kiosk.config.cast[0]!.id]: { tapped: 3, live: 1 } };

      // The staff report, through the panel's channel (a call locks the panel: staff unlock it).
      for (let i = 0; kiosk.calls.running && i < 200; i++) await new Promise((r) => setTimeout(r, 25)); // the failed call cleans up
      value(await d(CHANNELS.staffUnlock, { pin: '246813' }));
      const report = value<VisitorReport>(await d(CHANNELS.staffVisitors, undefined));
      assert.deepEqual(report.today.counts, want);
      assert.equal(report.timeZone, TZ);
      assert.deepEqual(report.counting, { presence: true });
      // The fleet status's day is the same.
      assert.deepEqual(kiosk.visitors.today(), report.today);

      // "tapped" = sessions created + refused; created = gave up + failed + live.
      const c = report.today.counts;
      assert.equal(c.tapped, c.gaveUp + c.failed + c.live + c.refused.ageGate + c.refused.closed + c.refused.outOfOrder);

      // Went live equals the ledger's live sessions, hour by hour (the kiosk's local hours).
      const { records } = ledger.read();
      const ledgerLive = new Map<string, number>();
      for (const r of records) if (r.kind === 'session' && r.live_at) ledgerLive.set(localHour(Date.parse(r.live_at), TZ), (ledgerLive.get(localHour(Date.parse(r.live_at), TZ)) ?? 0) + 1);
      const funnelLive = new Map(report.hours.filter((h) => h.counts.live > 0).map((h) => [h.hour, h.counts.live]));
      assert.deepEqual(funnelLive, ledgerLive);
      assert.equal(records.filter((r) => r.kind === 'session').length, 3); // the three sessions created

      // /metrics: the same counts, as counters.
      const text = await metrics.render();
      const series = (metric: string) =>
        text
          .split('\n')
          .filter((l) => l.startsWith(`avatar_kiosk_${metric}{`))
          .sort();
      assert.deepEqual(series('visitor_funnel_total'), [
        'avatar_kiosk_visitor_funnel_total{step="approached"} 1',
        'avatar_kiosk_visitor_funnel_total{step="endedBadly"} 0',
        'avatar_kiosk_visitor_funnel_total{step="endedWell"} 1',
        'avatar_kiosk_visitor_funnel_total{step="failed"} 1',
        'avatar_kiosk_visitor_funnel_total{step="gaveUp"} 1',
        'avatar_kiosk_visitor_funnel_total{step="greeted"} 1',
        'avatar_kiosk_visitor_funnel_total{step="live"} 1',
        'avatar_kiosk_visitor_funnel_total{step="noticed"} 1',
        'avatar_kiosk_visitor_funnel_total{step="tapped"} 5',
      ]);
      assert.deepEqual(series('visitor_refusals_total'), [
        'avatar_kiosk_visitor_refusals_total{kind="ageGate"} 0',
        'avatar_kiosk_visitor_refusals_total{kind="closed"} 2',
        'avatar_kiosk_visitor_refusals_total{kind="outOfOrder"} 0',
      ]);
      assert.deepEqual(series('visitor_call_length_total'), [
        'avatar_kiosk_visitor_call_length_total{bucket="from1to3m"} 0',
        'avatar_kiosk_visitor_call_length_total{bucket="from3to10m"} 0',
        'avatar_kiosk_visitor_call_length_total{bucket="over10m"} 0',
        'avatar_kiosk_visitor_call_length_total{bucket="under1m"} 1',
      ]);
      // Debian's promtool finds nothing wrong with the exposition.
      const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));
      if (promtool) {
        const file = join(dir, 'metrics.txt');
        writeFileSync(file, text);
        const lint = execFileSync('sh', ['-c', `${promtool} check metrics < ${file} 2>&1 || true`], { encoding: 'utf8' });
        assert.equal(lint.split('\n').filter((l) => l.includes('visitor')).join('\n'), '');
      }

      // Shut down (the store is written) and read it back as a restarted kiosk would.
      await kiosk.shutdown();
      const again = openVisitorFunnelStore({ dir, timeZone: TZ, clock: systemClock });
      assert.equal(again.damaged, null);
      assert.deepEqual(buildVisitorReport(again, TZ, Date.now(), true).today, report.today);
    } finally {
      await kiosk.shutdown();
    }
  });
});
