/**
 * The fleet's one `/metrics`, built at scrape time from the console's FleetState (what arrived over
 * MQTT), so Prometheus scrapes one address on the operator's side and never needs to reach a kiosk
 * behind NAT. Every series carries a `kiosk` label. Its own prom-client Registry.
 *
 * Counters count what the console received while it ran (events the broker queued for its persistent
 * session included); they start at zero when the console starts, which Prometheus' rate() handles.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { FleetState } from './state.ts';

export const FLEET_PREFIX = 'avatar_fleet_';

export interface ConsoleMetrics {
  readonly registry: Registry;
  render(): Promise<string>;
}

export function createConsoleMetrics(state: FleetState, connected: () => boolean): ConsoleMetrics {
  const registry = new Registry();
  const registers = [registry];
  const perKiosk = <T>(fill: (row: ReturnType<FleetState['counts']>[number]) => T) => state.counts().map(fill);

  new Gauge({
    name: `${FLEET_PREFIX}broker_connected`,
    help: '1 while the console is connected to the fleet broker.',
    registers,
    collect() {
      this.set(connected() ? 1 : 0);
    },
  });
  const gauge = (name: string, help: string, value: (k: ReturnType<FleetState['counts']>[number]) => number | null, labels: string[] = ['kiosk']) =>
    new Gauge({
      name: `${FLEET_PREFIX}${name}`,
      help,
      labelNames: labels,
      registers,
      collect() {
        this.reset();
        perKiosk((k) => {
          const v = value(k);
          if (v !== null) this.set({ kiosk: k.row.kioskId }, v);
        });
      },
    });
  gauge('kiosk_online', '1 while the kiosk is connected to the broker (its retained status), 0 after its last will.', (k) => (k.row.online ? 1 : 0));
  gauge('kiosk_open', '1 inside opening hours (or none set), 0 while closed; absent while offline.', (k) => (k.row.online && k.row.open !== null ? (k.row.open ? 1 : 0) : null));
  gauge('kiosk_in_call', '1 while the kiosk is in a call (phase live).', (k) => (k.row.online ? (k.row.phase === 'live' ? 1 : 0) : null));
  gauge('kiosk_today_sessions', "Today's sessions as the kiosk reports them in its status.", (k) => k.row.todaySessions);
  gauge('kiosk_today_credits', "Today's credits as the kiosk reports them in its status.", (k) => k.row.todayCredits);
  gauge('kiosk_queued_events', 'Events waiting on the kiosk\'s disk for the broker.', (k) => k.row.queued);
  gauge('kiosk_dropped_events', 'Events the kiosk dropped from its full queue (its status).', (k) => k.row.droppedEvents);
  gauge('kiosk_policy_error', '1 while the kiosk reports a refused policy block.', (k) => (k.row.policyError ? 1 : 0));
  gauge('kiosk_last_call_timestamp_seconds', "End of the kiosk's last call the console received (the kiosk's clock).", (k) => (k.counts.lastCallAtMs === null ? null : k.counts.lastCallAtMs / 1000));
  gauge('kiosk_status_change_timestamp_seconds', "When the console saw the kiosk go online or offline (the console's clock); its own start when the change came before it.", (k) => (k.row.sinceAt === null ? state.startedAtMs : Date.parse(k.row.sinceAt)) / 1000);
  new Gauge({
    name: `${FLEET_PREFIX}kiosk_info`,
    help: 'Always 1: the kiosk\'s version, group and mode as labels.',
    labelNames: ['kiosk', 'version', 'group', 'mode'],
    registers,
    collect() {
      this.reset();
      perKiosk((k) => this.set({ kiosk: k.row.kioskId, version: k.row.version ?? '', group: k.row.group ?? '', mode: k.row.mode ?? '' }, 1));
    },
  });

  const counter = (name: string, help: string, label: string, pick: (k: ReturnType<FleetState['counts']>[number]) => Map<string, number>) =>
    new Counter({
      name: `${FLEET_PREFIX}${name}`,
      help,
      labelNames: ['kiosk', label],
      registers,
      collect() {
        this.reset();
        perKiosk((k) => {
          for (const [value, n] of pick(k)) this.inc({ kiosk: k.row.kioskId, [label]: value }, n);
        });
      },
    });
  new Counter({
    name: `${FLEET_PREFIX}audit_violations_total`,
    help: "Calls the avatar service's content review ended (audit_violation), as each kiosk's status counts them since its start.",
    labelNames: ['kiosk'],
    registers,
    collect() {
      this.reset();
      perKiosk((k) => this.inc({ kiosk: k.row.kioskId }, k.row.auditViolations));
    },
  });
  gauge('kiosk_public', '1 while the kiosk runs as public (moderation strict on every create), 0 as adult; absent when it does not say.', (k) => (k.row.safety ? (k.row.safety.audience === 'public' ? 1 : 0) : null));
  counter('sessions_total', 'Calls ended, from the kiosks\' ledger events, by end reason.', 'end_reason', (k) => k.counts.sessionsByEnd);
  counter('session_errors_total', 'Calls that failed or ended on an error, by error code.', 'code', (k) => k.counts.errorsByCode);
  counter('credits_total', 'Credits billed, from the ledger events, by avatar.', 'avatar', (k) => k.counts.creditsByAvatar);
  counter('account_trouble_total', 'The service refused for the account\'s balance (create refused, credit_insufficient hang-up).', 'reason', (k) => k.counts.accountTroubleByReason);
  new Counter({
    name: `${FLEET_PREFIX}media_stalls_total`,
    help: 'Calls hung up by the media watchdog (end reason media_stalled).',
    labelNames: ['kiosk'],
    registers,
    collect() {
      this.reset();
      perKiosk((k) => this.inc({ kiosk: k.row.kioskId }, k.counts.mediaStalls));
    },
  });

  return {
    registry,
    render: () => registry.metrics(),
  };
}
