/**
 * The kiosk's one outbound connection to the operator's MQTT broker (mqtt.js), so kiosks behind NAT and
 * firewalls can be watched and steered without any inbound port. Electron-free: the host (main's
 * feature, or the browser mode) gives it the status figures and a `FleetControl` to act with.
 *
 * Topics, under `<prefix>/<kioskId>/`:
 *  - `status`: retained JSON, republished on change at most once a second; the broker's last will
 *    replaces it with `{"online":false}` when the kiosk dies, and a clean stop says so itself;
 *  - `events`: each ledger record, QoS 1, from the on-disk queue (event-queue.ts), one at a time in order;
 *  - `cmd` → `cmd/result`: commands (the table in command-table.ts, parsed by commands.ts), each answered
 *    once; a repeated id is answered with the first answer again and not run twice. Commands also come on
 *    the fleet-wide `<prefix>/_fleet/cmd` and the group's `<prefix>/_group/<group>/cmd`; answers always go
 *    to the kiosk's own `cmd/result`.
 *
 * The command channel is guarded (command-guard.ts): a retained command is refused (the broker would
 * hand it over again at every connect), every command needs an expiry, the ids already run are kept on
 * disk, commands are rate limited, and the broker is told the largest packet the kiosk takes. The session
 * is persistent (fixed client id, clean: false, QoS 1), so commands sent while the kiosk was offline
 * arrive when it reconnects — if they have not expired.
 *
 * The broker password is never logged (it is registered as a secret with the redacting logger).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { connect, MqttClient, type IClientOptions, type IStream } from 'mqtt';
import { settledWithin, type Clock, type TimerHandle } from '../core/clock.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { addSecret, silentLogger, type Logger } from '../core/log.ts';
import { DIRECT, proxyAgent, tunnelStream, type ProxyRoute } from '../core/proxy.ts';
import type { MqttSettings } from '../kiosk/fleet-config.ts';
import { COMMAND_BURST, COMMAND_REFILL_MS, compactAnswer, createRateLimiter, expiryProblem, openCommandLog } from './command-guard.ts';
import { commandRow, MISSING_CAPABILITY, type CommandContext, type CommandOutcome, type FleetControl, type HostCapability } from './command-table.ts';
import { parseCommand, readCommandId, type Command, type CommandResult } from './commands.ts';
import { openEventQueue, type EventQueue } from './event-queue.ts';
import type { UpdateStatus } from './safe-updates.ts';
import type { DayCallFigures } from '../kiosk/call-figures.ts';
import type { FunnelDay } from '../core/funnel.ts';

export { MAX_SCREENSHOT_BYTES, type FleetControl, type FleetUpdates } from './command-table.ts';

/** Status is republished at most this often. */
export const STATUS_MIN_INTERVAL_MS = 1000;
/**
 * How long closing waits for the broker, per step (the "stopped" status, then the goodbye): a broker
 * that hangs with the connection open never answers, and mqtt.js leaves both promises pending then, so a
 * kiosk quitting or restarting would wait forever. Past it the last will says "offline" for us.
 */
export const CLOSE_WAIT_MS = 2_000;
/** Answers kept for repeated command ids. */
export const REMEMBERED_COMMANDS = 200;
/** The largest packet the kiosk takes from the broker (MQTT 5 maximumPacketSize): the broker drops
 *  anything bigger for this client instead of sending it. The largest command, an `apply` with a
 *  20,000-character persona, is far below. */
export const MAX_INBOUND_PACKET_BYTES = 256 * 1024;
/** How long the broker keeps this kiosk's session (its subscriptions and the QoS 1 commands waiting for
 *  it) while it is offline. Each command's own expiry still applies. */
export const SESSION_EXPIRY_S = 24 * 60 * 60;
const COMMANDS_PER_MINUTE = Math.round(60_000 / COMMAND_REFILL_MS);

/** What the host reports about the kiosk (sampled whenever the status is published). */
export interface FleetStatusFields {
  version: string;
  mode: string;
  phase: string;
  /** The cast members offered (ids). */
  cast: string[];
  open: boolean;
  /** When open/closed next changes (ISO), or null. */
  nextChangeAt: string | null;
  /**
   * The ledger's totals of the kiosk's local day `day` (from `from` to `to`, ISO times): real calls only;
   * demo calls (the built-in emulator, nobody paid) apart in `demoSessions`.
   */
  today: { sessions: number; credits: number; demoSessions?: number; day?: string; from?: string; to?: string };
  lastErrorCode: string | null;
  /** Whether Chromium's sandbox is on (false: started with --no-sandbox, e.g. by an AppImage's launcher). */
  sandbox?: boolean;
  /** Updates (safe-updates.ts): phase, how this install updates, the version waiting, the pin, the last error. Absent: no update feed. */
  update?: UpdateStatus | null;
  /** The day's field figures of real calls (p50/p95 from the tap), once a call has ended today. */
  callFigures?: DayCallFigures;
  /** Why the administrator's policy was not applied as written (null when it was, or there is none). */
  policyError?: string | null;
  /** The avatar's volume, 0–100 % (kiosk/avatar-volume.ts); absent: the host does not say. */
  avatarVolume?: number;
  /** Whether the kiosk reaches its service (kiosk/service-health.ts): `connected`, `unreachable`, …, with
   *  what is the case and what to do. */
  service?: { status: string; message: string; action: string | null };
  /** Who the kiosk is for (docs/safety.md): the audience it runs as, the moderation it sends, its region,
   *  why adult was refused, the age gate's counts and the calls the service's content review ended. */
  safety?: FleetSafety;
  /** The kiosk's local day of the visitor funnel so far (docs/analytics.md): counts only, exact (the
   *  console applies the threshold to what it shows and exports). Absent: the host does not count. */
  visitors?: FunnelDay;
}

export interface FleetSafety {
  audience: 'public' | 'adult';
  moderation: 'strict' | 'disabled';
  region: string | null;
  refusal: string | null;
  ageGate: { asked: number; confirmed: number; declined: number };
  auditViolations: number;
}

export type FleetStatus = Omit<FleetStatusFields, 'policyError'> & {
  online: true;
  kioskId: string;
  /** The kiosk's group (`mqtt.group`), or null. */
  group: string | null;
  queued: number;
  /** Events dropped because the on-disk queue was full (the ledger keeps them). */
  droppedEvents: number;
  policyError: string | null;
  at: string;
};

export interface MqttLinkOptions {
  settings: MqttSettings;
  kioskId: string;
  /** Where the event queue lives (the user-data folder). */
  dataDir: string;
  status(): FleetStatusFields;
  control: FleetControl;
  clock: Clock;
  logger?: Logger;
  /** Reconnect delay (tests shorten it). Default 5 s. */
  reconnectMs?: number;
  /** The command rate limit (tests widen it). Default COMMAND_BURST, then one per COMMAND_REFILL_MS. */
  commandRate?: { burst: number; refillMs: number };
  readFile?: (path: string) => Buffer;
  /** How to reach the broker (core/proxy.ts `routeFor`, the venue's proxy); default direct. */
  route?: ProxyRoute;
}

export interface MqttLink {
  readonly kioskId: string;
  readonly topics: { status: string; events: string; cmd: string; result: string; fleetCmd: string; groupCmd: string | null };
  readonly connected: boolean;
  /** Something in the status may have changed: republish (throttled, only if it differs). */
  statusChanged(): void;
  /** Queue a ledger record for the `events` topic (on disk first). */
  publishRecord(record: unknown): void;
  /** Say offline, stop. */
  close(): Promise<void>;
}

/** The computer's host name as a topic level (never starting with "_": those levels are the fleet's). */
export function defaultKioskId(name: string = hostname()): string {
  return name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-_]+|-+$/g, '').slice(0, 64) || 'kiosk';
}

/** Fleet-wide and group commands: levels starting with "_" (a kiosk id may not be used for them). */
export function topicsFor(prefix: string, kioskId: string, group: string | null = null): MqttLink['topics'] {
  const base = `${prefix}/${kioskId}`;
  return {
    status: `${base}/status`,
    events: `${base}/events`,
    cmd: `${base}/cmd`,
    result: `${base}/cmd/result`,
    fleetCmd: `${prefix}/_fleet/cmd`,
    groupCmd: group ? `${prefix}/_group/${group}/cmd` : null,
  };
}

/** The client options, certificates read from their files (a missing file is an invalid_config, said plainly). */
export function clientOptions(settings: MqttSettings, kioskId: string, willTopic: string, readFile: (path: string) => Buffer, reconnectMs: number): IClientOptions {
  const read = (what: string, path: string | undefined) => {
    if (!path) return undefined;
    try {
      return readFile(path);
    } catch (error) {
      throw new AvatarError('invalid_config', `The MQTT ${what} file ${path} could not be read (${(error as { code?: string }).code ?? 'error'}).`, { details: { field: `mqtt.${what}File` } });
    }
  };
  const cert = read('cert', settings.certFile);
  const key = read('key', settings.keyFile);
  const ca = read('ca', settings.caFile);
  return {
    clientId: settings.clientId ?? kioskId,
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(ca ? { ca } : {}),
    protocolVersion: 5,
    // A persistent session: the broker keeps the subscriptions and queues QoS 1 commands while the kiosk
    // is away (each command's expiry bounds how long), under the fixed client id.
    clean: false,
    properties: { sessionExpiryInterval: SESSION_EXPIRY_S, maximumPacketSize: MAX_INBOUND_PACKET_BYTES },
    keepalive: 30,
    connectTimeout: 15_000,
    reconnectPeriod: reconnectMs,
    rejectUnauthorized: true,
    // The offline queue of mqtt.js would send stale status: events wait in our own disk queue instead.
    queueQoSZero: false,
    will: { topic: willTopic, payload: Buffer.from(JSON.stringify({ online: false, kioskId, reason: 'connection lost' })), qos: 1, retain: true },
  };
}

/**
 * `connect` through `route`: ws/wss take the proxy's agent (mqtt.js hands `wsOptions` to `ws`); mqtt and
 * mqtts get a stream through the proxy's tunnel (mqtts: TLS to the broker inside it, the broker's
 * certificate checked as on a direct link). Each reconnect opens a new tunnel.
 */
export function connectVia(url: string, opts: IClientOptions, route: ProxyRoute): MqttClient {
  if (route.kind === 'direct') return connect(url, opts);
  const parsed = new URL(url);
  const protocol = parsed.protocol.replace(/:$/, '');
  if (protocol === 'ws' || protocol === 'wss') return connect(url, { ...opts, wsOptions: { agent: proxyAgent(route)! } });
  if (protocol !== 'mqtt' && protocol !== 'mqtts') throw new AvatarError('invalid_config', `The MQTT URL scheme ${protocol}: cannot go through a proxy.`, { details: { field: 'mqtt.url' } });
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const port = Number(parsed.port) || (protocol === 'mqtts' ? 8883 : 1883);
  const tls =
    protocol === 'mqtts'
      ? { servername: host, rejectUnauthorized: opts.rejectUnauthorized ?? true, ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.cert ? { cert: opts.cert } : {}), ...(opts.key ? { key: opts.key } : {}) }
      : false;
  return new MqttClient(() => tunnelStream(route, { host, port, tls }) as unknown as IStream, { ...opts, protocol, host, hostname: host, port });
}

export function startMqttLink(options: MqttLinkOptions): MqttLink {
  const { settings, kioskId, control, clock } = options;
  const logger = options.logger ?? silentLogger;
  addSecret(settings.password ?? null);
  const group = settings.group ?? null;
  const topics = topicsFor(settings.topicPrefix, kioskId, group);
  const commandTopics = new Set([topics.cmd, topics.fleetCmd, ...(topics.groupCmd ? [topics.groupCmd] : [])]);
  const queue: EventQueue = openEventQueue({ dir: options.dataDir, limit: settings.queueLimit, logger });
  const opts = clientOptions(settings, kioskId, topics.status, options.readFile ?? ((p) => readFileSync(p)), options.reconnectMs ?? 5000);
  logger.info('Fleet link: connecting to the broker', { url: settings.url, clientId: opts.clientId, username: settings.username ?? null, kioskId, queued: queue.size });
  const client: MqttClient = connectVia(settings.url, opts, options.route ?? DIRECT);

  let closed = false;
  let lastStatus = '';
  let lastStatusAtMs = -Infinity;
  let statusTimer: TimerHandle | null = null;
  let pumping = false;
  const answers = new Map<string, Promise<CommandResult>>();
  const commandLog = openCommandLog({ dir: options.dataDir, clock, logger });
  const limiter = createRateLimiter(clock, options.commandRate?.burst, options.commandRate?.refillMs);
  /** What the broker takes from us (its CONNACK's maximumPacketSize), when it says. */
  let brokerMaxPacket: number | null = null;

  client.on('connect', (connack) => {
    // mqtt.js still reports a CONNACK that arrives while close() ends the client: the link is stopped.
    if (closed) return;
    brokerMaxPacket = connack.properties?.maximumPacketSize ?? null;
    logger.info('Fleet link: connected', { kioskId, queued: queue.size, sessionPresent: connack.sessionPresent });
    lastStatus = ''; // the broker may have the last will's "offline" retained: say online again
    publishStatus();
    // Retain-as-published: a retained command keeps its flag even when it arrives live, so it is refused
    // at once, not only at the next connect.
    const subscribed = [...commandTopics];
    client.subscribe(subscribed, { qos: 1, rap: true }, (error, _granted, suback) => {
      // mqtt.js turns a refusal into an error and leaves `granted` at the QoS asked for: the SUBACK's
      // reason codes (0x80 and above: refused, 0x87 not authorized under MQTT 5) name the refused topics.
      // An error without a SUBACK (the connection went) names them all.
      const codes = (suback?.granted ?? []) as number[];
      const refused = subscribed.filter((_, i) => (codes[i] ?? 0) >= 0x80);
      if (error || refused.length) logger.error('Fleet link: the broker refused a command subscription (check its ACL)', { topics: refused.length ? refused : subscribed });
    });
    pump();
  });
  client.on('close', () => {
    if (!closed) logger.debug('Fleet link: connection closed; reconnecting');
  });
  client.on('error', (error) => {
    // Never the password: mqtt.js errors name the reason (ECONNREFUSED, "Not authorized").
    logger.warn('Fleet link: broker error', { error: error.message });
  });
  client.on('message', (topic, payload, packet) => {
    if (!commandTopics.has(topic)) return;
    void onCommand(payload, { retained: packet.retain, messageExpirySeconds: packet.properties?.messageExpiryInterval });
  });

  function statusNow(): FleetStatus {
    const { policyError, ...fields } = options.status();
    return { online: true, kioskId, group, ...fields, queued: queue.size, droppedEvents: queue.dropped, policyError: policyError ?? null, at: new Date(clock.now()).toISOString() };
  }

  function publishStatus(): void {
    if (closed || !client.connected) return;
    const status = statusNow();
    const { at: _at, ...comparable } = status;
    const key = JSON.stringify(comparable);
    if (key === lastStatus) return;
    lastStatus = key;
    lastStatusAtMs = clock.now();
    client.publish(topics.status, JSON.stringify(status), { qos: 1, retain: true }, (error) => {
      if (error) logger.debug('Fleet link: status not published', { error: error.message });
    });
  }

  function statusChanged(): void {
    if (closed || statusTimer !== null) return;
    const wait = lastStatusAtMs + STATUS_MIN_INTERVAL_MS - clock.now();
    if (wait <= 0) return publishStatus();
    statusTimer = clock.setTimeout(() => {
      statusTimer = null;
      publishStatus();
    }, wait);
  }

  /** Send the queue's head, wait for the broker's PUBACK, drop it, next. */
  function pump(): void {
    if (pumping || closed) return;
    pumping = true;
    void (async () => {
      try {
        for (let head = queue.peek(); head && client.connected && !closed; head = queue.peek()) {
          await client.publishAsync(topics.events, JSON.stringify({ id: head.id, kioskId, at: head.at, record: head.record }), { qos: 1 });
          queue.ack(head.seq);
        }
      } catch (error) {
        logger.warn('Fleet link: an event was not accepted; it stays queued', { error: error instanceof Error ? error.message : String(error), queued: queue.size });
      } finally {
        pumping = false;
      }
      statusChanged(); // the queue length is in the status
    })();
  }

  async function answer(result: CommandResult): Promise<void> {
    if (closed) return;
    await client.publishAsync(topics.result, JSON.stringify(result), { qos: 1 }).catch((error: unknown) => {
      logger.warn('Fleet link: a command answer was not published', { error: String(error) });
    });
  }

  /** Commands of a one-at-a-time row (a screenshot) running now. */
  const running = new Set<string>();

  /** Run one command through its row of the table: what the host lacks, one at a time, the call, the handler. */
  async function run(command: Command): Promise<CommandResult> {
    const at = () => new Date(clock.now()).toISOString();
    const answerWith = (outcome: CommandOutcome): CommandResult =>
      outcome.ok ? { id: command.id, cmd: command.cmd, ok: true, result: outcome.result, at: at() } : { id: command.id, cmd: command.cmd, ok: false, error: { code: outcome.code, message: outcome.message }, at: at() };
    const row = commandRow(command.cmd);
    // Before anything else: a forced command this kiosk cannot run must not hang up the visitor first.
    if (row.needs !== null && control[row.needs] === undefined) return answerWith({ ok: false, code: 'unsupported', message: control.lacks?.[row.needs] ?? MISSING_CAPABILITY[row.needs] });
    if (row.oneAtATime !== undefined && running.has(command.cmd)) return answerWith({ ok: false, code: 'busy', message: row.oneAtATime });
    if (row.interrupts && control.inCall()) {
      if (!command.force) return answerWith({ ok: false, code: 'busy', message: `A visitor is in a call; "${command.cmd}" would interrupt it. Send it again with "force": true to end the call first.` });
      await control.endCall();
    }
    const ctx = contextFor(row.needs);
    if (row.oneAtATime !== undefined) running.add(command.cmd);
    try {
      return answerWith(await row.run(command, ctx));
    } catch (error) {
      const e = toAvatarError(error);
      return answerWith({ ok: false, code: e.code, message: e.message });
    } finally {
      if (row.oneAtATime !== undefined) running.delete(command.cmd);
    }
  }

  function contextFor(needs: HostCapability | null): CommandContext<HostCapability | null> {
    return {
      control,
      host: (needs === null ? undefined : control[needs]) as never,
      // Read when a handler asks (ping): the status is not worth building for every command.
      get version() {
        return options.status().version;
      },
      brokerMaxPacket,
    };
  }

  async function onCommand(payload: Buffer, delivery: { retained: boolean; messageExpirySeconds: number | undefined }): Promise<void> {
    // An empty message is how a retained command is cleared: nothing to run or answer.
    if (payload.length === 0) return;
    const nowIso = () => new Date(clock.now()).toISOString();
    const refuseRaw = (code: string, message: string, cmd: string | null = null) =>
      answer({ id: readCommandId(payload), cmd, ok: false, error: { code, message }, at: nowIso() });
    if (!limiter.take()) {
      logger.warn('Fleet link: too many commands; one was refused', { id: readCommandId(payload) });
      await refuseRaw('rate_limited', `Too many commands: this kiosk runs ${COMMAND_BURST} at once, then at most ${COMMANDS_PER_MINUTE} a minute; it was not run. Send it again later.`);
      return;
    }
    if (delivery.retained) {
      // A retained command would run again at every connect (a restart loop, every call hung up).
      logger.warn('Fleet link: a retained command was refused', { id: readCommandId(payload) });
      await refuseRaw('retained', 'Retained commands are refused: the broker would deliver it again at every connect. Publish commands without the retain flag (and clear this one with an empty retained message).');
      return;
    }
    const parsed = parseCommand(payload);
    if (!parsed.ok) {
      logger.warn('Fleet link: a malformed command was refused', { id: parsed.id, message: parsed.message });
      await answer({ id: parsed.id, cmd: parsed.cmd, ok: false, error: { code: 'invalid_request', message: parsed.message }, at: nowIso() });
      return;
    }
    const command = parsed.command;
    const expired = expiryProblem(command.expiresAt, delivery.messageExpirySeconds, clock.now());
    if (expired) {
      logger.warn('Fleet link: a command was refused for its expiry', { id: command.id, cmd: command.cmd, code: expired.code });
      await answer({ id: command.id, cmd: command.cmd, ok: false, error: expired, at: nowIso() });
      return;
    }
    const earlier = answers.get(command.id) ?? commandLog.earlier(command.id, nowIso());
    if (earlier) {
      logger.info('Fleet link: a repeated command id; answering as before, not run again', { id: command.id, cmd: command.cmd });
      await answer(await earlier);
      return;
    }
    logger.info('Fleet link: command', { id: command.id, cmd: command.cmd, force: command.force ?? false });
    // On disk before it runs: a restart (or a crash) during it must not let it run again.
    commandLog.started(command.id, command.cmd);
    const pending = run(command).then((result) => {
      commandLog.finished(result);
      return result;
    });
    answers.set(command.id, pending.then(compactAnswer));
    while (answers.size > REMEMBERED_COMMANDS) answers.delete(answers.keys().next().value!);
    const result = await pending;
    await answer(result);
    const after = commandRow(command.cmd).afterAnswer;
    if (result.ok && after) await after(contextFor(commandRow(command.cmd).needs));
    statusChanged();
  }

  return {
    kioskId,
    topics,
    get connected() {
      return client.connected;
    },
    statusChanged,
    publishRecord(record) {
      if (closed) return;
      try {
        queue.push(record, clock.now());
      } catch (error) {
        logger.error('Fleet link: an event could not be queued', { error: String(error) });
        return;
      }
      pump();
    },
    async close() {
      if (closed) return;
      if (statusTimer !== null) clock.clearTimeout(statusTimer);
      statusTimer = null;
      if (client.connected) {
        await settledWithin(client.publishAsync(topics.status, JSON.stringify({ online: false, kioskId, reason: 'stopped', at: new Date(clock.now()).toISOString() }), { qos: 1, retain: true }), CLOSE_WAIT_MS);
      }
      closed = true;
      if (!(await settledWithin(client.endAsync(), CLOSE_WAIT_MS))) client.end(true);
    },
  };
}
