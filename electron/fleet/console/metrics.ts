/**
 * The fleet's one `/metrics`, built at scrape time from the console's FleetState (what arrived over
 * MQTT), so Prometheus scrapes one address on the operator's side and never needs to reach a kiosk
 * behind NAT. Its own prom-client Registry.
 *
 * Counters count what the console received while it ran (events the broker queued for its persistent
 * session included); they start at zero when the console starts, which Prometheus' rate() handles.
 *
 * It never fails as a whole: each family is rendered on its own, and one that throws is left out of that
 * scrape and counted (`avatar_fleet_scrape_errors_total`), so Prometheus keeps every other series. What
 * reaches it is bounded first (intake.ts): figures within their range, at most LABEL_VALUES_PER_KIOSK values
 * per label per kiosk. Series per kiosk (docs/fleet.md lists them): 3 always (online, info, status change),
 * 4 more while it is online (open, in call, today's calls and credits), 1 once it reported a call, 1 for its
 * stalls, 4 only while not zero (queued, dropped, policy error, refused), up to 10 for its visitor funnel (a step
 * only at or above the threshold), and one per label value of its
 * counters: at most 9 end reasons, 9 error codes, 9 avatars and 2 balance words (each label's 8 + `other`).
 * The fleet-wide and per-group series let alerts count a venue or a share of the fleet instead of paging
 * per kiosk.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { silentLogger, type Logger } from '../../core/log.ts';
import type { FleetState, KioskCounts } from './state.ts';
import type { KioskRow, VisitorStep } from './view.ts';
import { VISITOR_STEPS, visitorsView } from './visitors.ts';
import { DEFAULT_FUNNEL_THRESHOLD } from '../../core/funnel.ts';

export const FLEET_PREFIX = 'avatar_fleet_';

/** What the console's broker link says about itself (link.ts `health()`). */
export interface BrokerFigures {
  /** The broker's address as the console was given it (the `broker` label). */
  broker: string;
  /** The broker's count of messages it dropped for any client since it started (`$SYS`), once read. */
  droppedMessages: number | null;
  /** The last message of any kind from the broker (the console's clock, ms). `$SYS` comes every 10 s. */
  lastMessageAtMs: number | null;
  /** The console's session taken over by another connection under its client id. */
  takeovers: number;
  /** The broker had lost the console's session when it connected again (what was queued is gone). */
  sessionsLost: number;
}

export interface ConsoleMetrics {
  readonly registry: Registry;
  render(): Promise<string>;
}

type KioskEntry = { row: KioskRow; counts: KioskCounts };

export function createConsoleMetrics(state: FleetState, connected: () => boolean, broker: () => BrokerFigures | null = () => null, logger: Logger = silentLogger): ConsoleMetrics {
  const registry = new Registry();
  const registers = [registry];
  const perKiosk = (fill: (k: KioskEntry) => void) => {
    for (const k of state.counts()) fill(k);
  };

  new Gauge({
    name: `${FLEET_PREFIX}broker_connected`,
    help: '1 while the console is connected to the fleet broker.',
    registers,
    collect() {
      this.set(connected() ? 1 : 0);
    },
  });
  const gauge = (name: string, help: string, value: (k: KioskEntry) => number | null) =>
    new Gauge({
      name: `${FLEET_PREFIX}${name}`,
      help,
      labelNames: ['kiosk'],
      registers,
      collect() {
        this.reset();
        perKiosk((k) => {
          const v = value(k);
          if (v !== null) this.set({ kiosk: k.row.kioskId }, v);
        });
      },
    });
  const nonZero = (v: number) => (v === 0 ? null : v);
  gauge('kiosk_online', '1 while the kiosk is connected to the broker (its retained status), 0 after its last will.', (k) => (k.row.online ? 1 : 0));
  gauge('kiosk_open', '1 inside opening hours (or none set), 0 while closed; absent while offline.', (k) => (k.row.online && k.row.open !== null ? (k.row.open ? 1 : 0) : null));
  gauge('kiosk_in_call', '1 while the kiosk is in a call (phase live).', (k) => (k.row.online ? (k.row.phase === 'live' ? 1 : 0) : null));
  gauge('kiosk_today_sessions', "Today's sessions as the kiosk reports them in its status.", (k) => k.row.todaySessions);
  gauge('kiosk_today_credits', "Today's credits as the kiosk reports them in its status.", (k) => k.row.todayCredits);
  gauge('kiosk_queued_events', "Events waiting on the kiosk's disk for the broker; absent at 0.", (k) => nonZero(k.row.queued));
  gauge('kiosk_dropped_events', 'Events the kiosk dropped from its full queue (its status); absent at 0.', (k) => nonZero(k.row.droppedEvents));
  gauge('kiosk_policy_error', '1 while the kiosk reports a refused policy block; absent otherwise.', (k) => (k.row.policyError ? 1 : null));
  gauge('kiosk_last_call_timestamp_seconds', "End of the kiosk's last call the console received (the kiosk's clock).", (k) => (k.counts.lastCallAtMs === null ? null : k.counts.lastCallAtMs / 1000));
  gauge('kiosk_status_change_timestamp_seconds', "When the console saw the kiosk go online or offline (the console's clock); its own start when the change came before it.", (k) => (k.row.sinceAt === null ? state.startedAtMs : Date.parse(k.row.sinceAt)) / 1000);
  new Gauge({
    name: `${FLEET_PREFIX}kiosk_info`,
    help: "Always 1: the kiosk's version, group and mode as labels.",
    labelNames: ['kiosk', 'version', 'group', 'mode'],
    registers,
    collect() {
      this.reset();
      perKiosk((k) => this.set({ kiosk: k.row.kioskId, version: k.row.version ?? '', group: k.row.group ?? '', mode: k.row.mode ?? '' }, 1));
    },
  });

  const counter = (name: string, help: string, label: string, pick: (k: KioskEntry) => Map<string, number>) =>
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
  counter('sessions_total', "Calls ended, from the kiosks' ledger events, by end reason (a kiosk's 9th and later reasons: other).", 'end_reason', (k) => k.counts.sessionsByEnd);
  counter('session_errors_total', 'Calls that failed or ended on an error, by error code (a kiosk\'s 9th and later codes: other).', 'code', (k) => k.counts.errorsByCode);
  counter('credits_total', 'Credits billed, from the ledger events, by avatar (a kiosk\'s 9th and later avatars: other).', 'avatar', (k) => k.counts.creditsByAvatar);
  counter('account_trouble_total', "The service refused for the account's balance (create refused, credit_insufficient hang-up).", 'reason', (k) => k.counts.accountTroubleByReason);
  new Counter({
    name: `${FLEET_PREFIX}kiosk_refused_payloads_total`,
    help: 'Messages from the kiosk the console refused (figures out of bounds, answers to nothing it asked); absent at 0.',
    labelNames: ['kiosk'],
    registers,
    collect() {
      this.reset();
      perKiosk((k) => {
        if (k.row.refused > 0) this.inc({ kiosk: k.row.kioskId }, k.row.refused);
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

  // The fleet and its groups (a group is the kiosk's `mqtt.group`: a venue, a floor), for alerts that count
  // a share instead of paging once per kiosk.
  const tally = () => {
    const groups = new Map<string, { all: number; offline: number }>();
    let all = 0;
    let offline = 0;
    perKiosk(({ row }) => {
      const g = groups.get(row.group ?? '') ?? { all: 0, offline: 0 };
      g.all++;
      all++;
      if (!row.online) {
        g.offline++;
        offline++;
      }
      groups.set(row.group ?? '', g);
    });
    return { groups, all, offline };
  };
  new Gauge({
    name: `${FLEET_PREFIX}kiosks`,
    help: 'Kiosks the console knows (each has sent a status or an event).',
    registers,
    collect() {
      this.set(tally().all);
    },
  });
  new Gauge({
    name: `${FLEET_PREFIX}kiosks_offline`,
    help: 'Kiosks whose last word was offline (a last will or a clean stop).',
    registers,
    collect() {
      this.set(tally().offline);
    },
  });
  const groupGauge = (name: string, help: string, pick: (g: { all: number; offline: number }) => number) =>
    new Gauge({
      name: `${FLEET_PREFIX}${name}`,
      help,
      labelNames: ['group'],
      registers,
      collect() {
        this.reset();
        for (const [group, g] of tally().groups) this.set({ group }, pick(g));
      },
    });
  groupGauge('group_kiosks', "Kiosks per group (their status' group; \"\" for none).", (g) => g.all);
  groupGauge('group_kiosks_offline', 'Offline kiosks per group.', (g) => g.offline);

  // What the console itself takes in: refused messages, label values folded into `other`, the broker's drops.
  new Counter({
    name: `${FLEET_PREFIX}refused_payloads_total`,
    help: 'Messages from kiosks the console refused, by topic (status, events, results) and reason (malformed, negative, not_finite, too_large, bad_time, unsolicited, not_png).',
    labelNames: ['topic', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const e of state.refusals.entries()) this.inc({ topic: e.topic, reason: e.reason }, e.count);
    },
  });
  new Counter({
    name: `${FLEET_PREFIX}label_values_folded_total`,
    help: "Calls counted under label value \"other\" because their kiosk had already used its 8 values of that label (end_reason, code, avatar).",
    labelNames: ['label'],
    registers,
    collect() {
      this.reset();
      for (const [label, n] of state.foldedLabels()) this.inc({ label }, n);
    },
  });
  // Labelled by the broker, which also leaves them out (rather than 0) until there is something to say.
  new Counter({
    name: `${FLEET_PREFIX}broker_messages_dropped_total`,
    help: "Messages the broker dropped for any client since it started, from its $SYS/broker/publish/messages/dropped (a queue or in-flight limit reached); absent until the broker said.",
    labelNames: ['broker'],
    registers,
    collect() {
      this.reset();
      const b = broker();
      if (b?.droppedMessages != null) this.inc({ broker: b.broker }, b.droppedMessages);
    },
  });
  new Gauge({
    name: `${FLEET_PREFIX}last_message_timestamp_seconds`,
    help: "The last message the console received from the broker (any topic: the broker's own $SYS comes every 10 s), on the console's clock; absent until the first.",
    labelNames: ['broker'],
    registers,
    collect() {
      this.reset();
      const b = broker();
      if (b?.lastMessageAtMs != null) this.set({ broker: b.broker }, b.lastMessageAtMs / 1000);
    },
  });
  new Counter({
    name: `${FLEET_PREFIX}broker_session_problems_total`,
    help: "The console's broker session: taken over (another connection under its client id) or lost (the broker no longer had it).",
    labelNames: ['problem'],
    registers,
    collect() {
      this.reset();
      const b = broker();
      if (!b) return;
      this.inc({ problem: 'taken_over' }, b.takeovers);
      this.inc({ problem: 'lost' }, b.sessionsLost);
    },
  });

  // The day's visitor funnel (visitors.ts): a kiosk's step only while its count may be shown (at or above the
  // threshold: no series says "3 people"), so at most 10 series per kiosk; the fleet's totals add up only those.
  const stepLabel = (s: VisitorStep) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  new Gauge({
    name: `${FLEET_PREFIX}kiosk_visitors`,
    help: `The kiosk's visitor funnel of the day the fleet reports, by step; absent while under the threshold (${DEFAULT_FUNNEL_THRESHOLD}).`,
    labelNames: ['kiosk', 'step'],
    registers,
    collect() {
      this.reset();
      for (const k of visitorsView(state.funnels()).kiosks) for (const s of VISITOR_STEPS) if (k.figures[s].value !== null) this.set({ kiosk: k.kioskId, step: stepLabel(s) }, k.figures[s].value);
    },
  });
  new Gauge({
    name: `${FLEET_PREFIX}visitors`,
    help: "The fleet's visitor funnel of the day, by step: the kiosks' counts at or above the threshold, added up.",
    labelNames: ['step'],
    registers,
    collect() {
      this.reset();
      const view = visitorsView(state.funnels());
      if (view.day === null) return;
      for (const s of VISITOR_STEPS) this.set({ step: stepLabel(s) }, view.fleet.figures[s].value ?? 0);
    },
  });

  // Its own registry: rendered last, after this scrape's failures.
  const own = new Registry();
  const scrapeErrors = new Counter({ name: `${FLEET_PREFIX}scrape_errors_total`, help: 'Metric families left out of a scrape because building them failed, by family.', labelNames: ['metric'], registers: [own] });

  return {
    registry,
    async render() {
      const parts: string[] = [];
      for (const { name } of registry.getMetricsAsArray()) {
        try {
          parts.push(await registry.getSingleMetricAsString(name));
        } catch (error) {
          scrapeErrors.inc({ metric: name });
          logger.error('Fleet console: a metric family was left out of the scrape', { metric: name, error: error instanceof Error ? error.message : String(error) });
        }
      }
      parts.push(await own.getSingleMetricAsString(`${FLEET_PREFIX}scrape_errors_total`));
      return `${parts.join('\n\n')}\n`;
    },
  };
}
