/**
 * The console's connection to the fleet's broker: it reads every kiosk's status, events and command
 * answers into a FleetState, and sends commands to one kiosk, a group or the whole fleet.
 *
 * - A persistent session (clean: false, a fixed client id, QoS 1 subscriptions, a session expiry): the
 *   broker keeps the events and answers that arrive while the console is away, and hands them over
 *   when it is back.
 * - Commands are checked here with the kiosk's own parser (commands.ts) before they leave, so the page
 *   gets the same refusal the kiosk would give; each carries `expiresAt` (the operator chooses how far
 *   ahead) and goes out with the MQTT 5 message expiry, never retained (a retained command would run
 *   again at every reconnect).
 * - A broker that stops answering with its connection still open (a hung process, a dead path that
 *   keeps TCP up) is noticed within seconds: a PINGREQ every PROBE_EVERY_MS, and the broker counts as
 *   not answering when nothing at all has come back for UNRESPONSIVE_AFTER_MS since one was sent. The
 *   link then says it is not connected (page, `/metrics`), and a command is refused at once with that
 *   reason rather than waiting on a PUBACK that will not come; one already sent waits until the broker has
 *   been silent for PUBLISH_CONFIRM_MS (PUBLISH_CONFIRM_MAX_MS at most). The MQTT keep-alive (KEEPALIVE_S)
 *   then drops the connection and the link reconnects.
 * - Remembering: an event is acknowledged to the broker only after the console's memory has it on disk
 *   (`beforeAck`, one write for the events that arrive together), so a crash cannot lose a call the broker
 *   already let go of; the state hears when the link goes down and comes back, so changes queued meanwhile
 *   get a "since" window (state.ts).
 */
import { randomBytes } from 'node:crypto';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { systemClock, type Clock, type TimerHandle } from '../../core/clock.ts';
import { silentLogger, type Logger, addSecret } from '../../core/log.ts';
import { parseCommand } from '../commands.ts';
import { pinRefusal } from '../feed-binding.ts';
import { KIOSK_ID } from './intake.ts';
import { watchLink, type LinkHealth } from './link-health.ts';
import type { FleetState } from './state.ts';
import type { CommandResponse, CommandTarget } from './view.ts';

/** How long a command may wait in the broker for an offline kiosk, unless the operator says. */
export const DEFAULT_COMMAND_TTL_S = 120;
/** The operator's choice of expiry: at least this… */
export const MIN_COMMAND_TTL_S = 10;
/** …and at most what a kiosk accepts (command-guard.ts MAX_COMMAND_LIFETIME_MS). */
export const MAX_COMMAND_TTL_S = 24 * 60 * 60;
/** How long the broker keeps the console's session (its queued messages) while it is away. */
export const SESSION_EXPIRY_S = 24 * 60 * 60;
/** MQTT keep-alive: the broker drops a silent console after 1.5 times this, and mqtt.js drops a silent
 *  broker as soon (it pings after KEEPALIVE_S without an answer and gives up half that later). */
export const KEEPALIVE_S = 10;
/** A PINGREQ this often while connected… */
export const PROBE_EVERY_MS = 2_000;
/** …and the broker is "not answering" once nothing came back this long after one was sent. */
export const UNRESPONSIVE_AFTER_MS = 4_000;
/** Acknowledgements held for one disk write are let go (written first) after this at most. */
export const HOLD_ACKS_MAX_MS = 1_000;
/** A command's PUBLISH is reported as not confirmed (no PUBACK) once the broker has sent nothing at all for
 *  this long since it went out… */
export const PUBLISH_CONFIRM_MS = 5_000;
/** …or after this in all, though the broker keeps sending: a console working through a backlog (10,000
 *  kiosks' answers) reads the PUBACK only after what the broker sent before it. */
export const PUBLISH_CONFIRM_MAX_MS = 30_000;

export interface ConsoleLinkOptions {
  url: string;
  topicPrefix: string;
  clientId: string;
  username?: string;
  password?: string;
  ca?: Buffer;
  state: FleetState;
  now(): number;
  /** For the probe's timers (default: the system's). */
  clock?: Clock;
  logger?: Logger;
  commandTtlS?: number;
  reconnectMs?: number;
  /** Called before events are acknowledged to the broker (once for those that arrived together): the
   *  memory's flush to disk. A throw leaves them unacknowledged. */
  beforeAck?: () => void;
}

/** How long a command stays valid (default: the link's), and its id when the caller chose it (a wave). */
export interface SendOptions {
  ttlS?: number;
  id?: string;
  /** Called once the command is checked, just before it is published: a kiosk's answer can arrive before the
   *  broker acknowledges the publish (and so before `send` resolves), so whoever counts answers learns of
   *  the command here. */
  onSending?: (sending: { id: string; expected: string[]; expiresAtMs: number }) => void;
}

export interface ConsoleLink {
  /** Connected, and the broker answers. */
  readonly connected: boolean;
  /** Resolves once the first connection is up (rejects after `timeoutMs`). */
  ready(timeoutMs: number): Promise<void>;
  send(target: CommandTarget, command: Record<string, unknown>, options?: SendOptions): Promise<CommandResponse>;
  onConnectionChange(listener: (connected: boolean) => void): () => void;
  /** Since when it is cut off, its session's problems, the broker's drops and heartbeat (link-health.ts). */
  health(): LinkHealth;
  close(): Promise<void>;
}

export function startConsoleLink(options: ConsoleLinkOptions): ConsoleLink {
  const { state, topicPrefix: prefix } = options;
  const logger = options.logger ?? silentLogger;
  addSecret(options.password ?? null);
  const ttlS = options.commandTtlS ?? DEFAULT_COMMAND_TTL_S;
  const clientOptions: IClientOptions = {
    clientId: options.clientId,
    ...(options.username ? { username: options.username } : {}),
    ...(options.password ? { password: options.password } : {}),
    ...(options.ca ? { ca: options.ca } : {}),
    protocolVersion: 5,
    clean: false,
    properties: { sessionExpiryInterval: SESSION_EXPIRY_S, maximumPacketSize: 16 * 1024 * 1024 },
    keepalive: KEEPALIVE_S,
    connectTimeout: 15_000,
    reconnectPeriod: options.reconnectMs ?? 3000,
    rejectUnauthorized: true,
  };
  const clock = options.clock ?? systemClock;
  // mqtt.js's keep-alive runs on the link's clock as well, so a test drives it with the probe.
  clientOptions.timerVariant = intervalsOn(clock);
  logger.info('Fleet console: connecting to the broker', { url: options.url, clientId: options.clientId, username: options.username ?? null });
  const client: MqttClient = connect(options.url, clientOptions);
  const watch = watchLink(client, { broker: brokerLabel(options.url), now: options.now, logger });
  const listeners = new Set<(connected: boolean) => void>();
  const statusTopic = new RegExp(`^${escape(prefix)}/([^/]+)/(status|events|cmd/result)$`);
  const eventTopic = new RegExp(`^${escape(prefix)}/[^/]+/events$`);

  // The probe: when the broker was last heard from, and since when a PINGREQ waits for anything at all.
  let answering = true;
  let lastHeardMs = clock.now();
  let waitingSinceMs: number | null = null;
  let probeTimer: TimerHandle | null = null;
  let shownConnected = false;
  const notify = () => {
    const now = client.connected && answering;
    if (now === shownConnected) return;
    shownConnected = now;
    for (const l of listeners) l(now);
  };
  const probe = () => {
    probeTimer = null;
    if (!client.connected) return;
    const now = clock.now();
    if (waitingSinceMs !== null && answering && now - waitingSinceMs >= UNRESPONSIVE_AFTER_MS) {
      answering = false;
      logger.warn('Fleet console: the broker does not answer (its connection is open); commands are refused until it does', { silentForMs: now - lastHeardMs });
      notify();
    }
    if (waitingSinceMs === null) waitingSinceMs = now;
    client.sendPing();
    probeTimer = clock.setTimeout(probe, PROBE_EVERY_MS);
  };
  const stopProbe = () => {
    if (probeTimer !== null) clock.clearTimeout(probeTimer);
    probeTimer = null;
  };
  let keptAliveMs = clock.now();
  client.on('packetreceive', () => {
    lastHeardMs = clock.now();
    // Anything from the broker shows it alive: while the console works through a backlog (10,000 kiosks'
    // statuses at once) its PINGRESP can wait behind the messages sent before it, and mqtt.js, which
    // counts only PINGRESPs and acknowledgements of its own packets, would drop a working connection and
    // start the backlog again. Once a second is enough: the keep-alive is KEEPALIVE_S.
    if (lastHeardMs - keptAliveMs >= 1000) {
      keptAliveMs = lastHeardMs;
      client.reschedulePing(true);
    }
    waitingSinceMs = null;
    if (!answering) {
      answering = true;
      logger.warn('Fleet console: the broker answers again');
      notify();
    }
  });
  // Group commit. An event is acknowledged (PUBACK) only once the memory has written it, but the events
  // that arrive together share one write: each one's PUBACK is held, and one flush at the end of the batch
  // (after what the socket delivered in one read is handled) lets them all go. One disk sync per event
  // could not keep up with a fleet: at 10,000 kiosks on a loaded machine the syncs took 67 s of 113 s of
  // the console's time, its page did not load within 30 s, and the PINGRESP queued behind the backlog
  // timed its link out.
  // mqtt.js reads the next message only once this one's PUBACK is written, and offers no manual
  // acknowledgement, so the hold is on its packet writer: every PUBACK behind a held one waits too
  // (MQTT: PUBACKs go out in the order the messages came), and a failed write lets its events' PUBACKs
  // go nowhere, so the broker hands those events over again when the console reconnects (repeats are
  // dropped by their id).
  type SendPacket = (packet: { cmd: string; messageId?: number }, cb?: (error?: Error) => void, ...rest: unknown[]) => void;
  const writer = client as unknown as { _sendPacket?: SendPacket };
  if (typeof writer._sendPacket !== 'function') throw new Error('This mqtt.js has no packet writer (_sendPacket) to hold acknowledgements on; the console needs mqtt 5.x as locked in package-lock.json.');
  const sendPacket: SendPacket = writer._sendPacket.bind(client);
  const unwritten = new Set<number>();
  let held: Array<{ packet: { cmd: string; messageId?: number }; event: boolean }> = [];
  let flushQueued = false;
  let heldSinceMs = 0;
  const releaseHeld = () => {
    flushQueued = false;
    const batch = held;
    held = [];
    let written = true;
    try {
      options.beforeAck!();
    } catch (error) {
      written = false;
      logger.error('Fleet console: events could not be written to disk; they are left for the broker to send again', { events: batch.filter((b) => b.event).length, error: String(error) });
    }
    // A console stopping (or cut off) meanwhile: the broker sends those again at the next start.
    if (client.disconnecting || !client.connected) return;
    for (const b of batch) if (written || !b.event) sendPacket(b.packet);
  };
  if (options.beforeAck) {
    writer._sendPacket = (packet, cb, ...rest) => {
      if (packet.cmd !== 'puback' || (!held.length && !unwritten.has(packet.messageId ?? -1))) return sendPacket(packet, cb, ...rest);
      if (!held.length) heldSinceMs = clock.now();
      held.push({ packet, event: unwritten.delete(packet.messageId ?? -1) });
      // A batch the console is slow to get through is let go in parts: the broker drops a client that sends
      // nothing for 1.5 × the keep-alive, and these PUBACKs are all it hears while the batch lasts.
      if (clock.now() - heldSinceMs >= HOLD_ACKS_MAX_MS) releaseHeld();
      // The next message is read now; this PUBACK leaves with the batch's flush.
      cb?.();
    };
    client.handleMessage = (packet, callback) => {
      if (eventTopic.test(packet.topic) && packet.messageId !== undefined) {
        unwritten.add(packet.messageId);
        if (!flushQueued) {
          flushQueued = true;
          setImmediate(releaseHeld);
        }
      }
      callback();
    };
  }

  client.on('connect', () => {
    logger.info('Fleet console: connected');
    answering = true;
    lastHeardMs = clock.now();
    waitingSinceMs = null;
    state.linkUp();
    stopProbe();
    probeTimer = clock.setTimeout(probe, PROBE_EVERY_MS);
    // Subscribed again on each connect: a broker that lost the session (restart without persistence)
    // would otherwise leave the console deaf.
    const topics = [`${prefix}/+/status`, `${prefix}/+/events`, `${prefix}/+/cmd/result`];
    client.subscribe(topics, { qos: 1 }, (error, _granted, suback) => {
      // What the broker kept for the session arrives before this answer: from here on, it is live.
      state.caughtUp();
      // mqtt.js turns a refusal into an error and leaves `granted` at the QoS asked for: the SUBACK's
      // reason codes (0x80 and above: refused, 0x87 not authorized under MQTT 5) name the topics.
      const codes = (suback?.granted ?? []) as number[];
      const refused = topics.filter((_, i) => (codes[i] ?? 0) >= 0x80);
      if (error || refused.length) logger.error('Fleet console: the broker refused a subscription (check the operator ACL)', { topics: refused });
    });
    notify();
  });
  client.on('close', () => {
    stopProbe();
    // Held PUBACKs belonged to that connection: the broker sends those messages again on the next one.
    held = [];
    unwritten.clear();
    state.linkDown();
    notify();
  });
  client.on('error', (error) => logger.warn('Fleet console: broker error', { error: error.message }));
  client.on('message', (topic, payload, packet) => {
    const m = statusTopic.exec(topic);
    if (!m) return;
    const kioskId = m[1]!;
    if (kioskId.startsWith('_')) return; // fleet-wide and group command topics, not kiosks
    const kind = m[2] === 'status' ? 'status' : m[2] === 'events' ? 'events' : 'results';
    // The console's rows, commands and CLI take kiosk ids of this shape only: any other topic level (a
    // control character, a 1,000-character name) is no kiosk of this fleet.
    if (!KIOSK_ID.test(kioskId)) return state.refuse(kind, 'malformed', null);
    if (m[2] === 'status') state.onStatus(kioskId, payload, packet.retain);
    else if (m[2] === 'events') state.onEvent(kioskId, payload);
    else state.onResult(kioskId, payload);
  });

  const at = (ms: number) => new Date(ms).toISOString().slice(11, 19);
  return {
    get connected() {
      return client.connected && answering;
    },
    ready(timeoutMs) {
      if (client.connected) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          client.off('connect', ok);
          reject(new Error(`The broker ${options.url} did not accept the console within ${timeoutMs / 1000} s.`));
        }, timeoutMs);
        const ok = () => {
          clearTimeout(timer);
          resolve();
        };
        client.once('connect', ok);
      });
    },
    async send(target, command, sendOptions = {}) {
      const id = sendOptions.id ?? newCommandId(options.now());
      const commandTtlS = sendOptions.ttlS ?? ttlS;
      if (!Number.isInteger(commandTtlS) || commandTtlS < MIN_COMMAND_TTL_S || commandTtlS > MAX_COMMAND_TTL_S) {
        return { ok: false, error: { code: 'invalid_request', message: `The expiry must be a whole number of seconds from ${MIN_COMMAND_TTL_S} to ${MAX_COMMAND_TTL_S} (${MAX_COMMAND_TTL_S / 3600} h, the longest a kiosk accepts); got ${commandTtlS}.` } };
      }
      const expiresAt = new Date(options.now() + commandTtlS * 1000).toISOString();
      const body = { ...command, id, expiresAt };
      const parsed = parseCommand(JSON.stringify(body));
      if (!parsed.ok) return { ok: false, error: { code: 'invalid_request', message: parsed.message } };
      let topics: string[];
      let expected: string[];
      if ('kiosks' in target) {
        const bad = target.kiosks.find((k) => !KIOSK_ID.test(k) || k.startsWith('_'));
        if (bad !== undefined || target.kiosks.length === 0) return { ok: false, error: { code: 'invalid_request', message: `"${bad ?? ''}" is not a kiosk id.` } };
        topics = target.kiosks.map((k) => `${prefix}/${k}/cmd`);
        expected = [...target.kiosks];
      } else if ('group' in target) {
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(target.group)) return { ok: false, error: { code: 'invalid_request', message: `"${target.group}" is not a group name.` } };
        topics = [`${prefix}/_group/${target.group}/cmd`];
        expected = state.members(target);
      } else {
        topics = [`${prefix}/_fleet/cmd`];
        expected = state.members(target);
      }
      // A pin below a kiosk's floor: the kiosk refuses it too; say so here, before anything is sent.
      const pin = parsed.command.cmd === 'update-pin' ? parsed.command.version : null;
      for (const kioskId of pin === null ? [] : expected) {
        const below = pinRefusal(pin!, state.updateFloor(kioskId));
        if (below) return { ok: false, error: { code: 'forbidden', message: `update-pin ${pin} is refused for ${kioskId}: ${below}.` } };
      }
      if (!client.connected) return { ok: false, error: { code: 'network', message: 'The console is not connected to the broker; try again when it is.' } };
      if (!answering) {
        return { ok: false, error: { code: 'network', message: `The broker has not answered the console since ${at(lastHeardMs)} (${Math.round((clock.now() - lastHeardMs) / 1000)} s; its connection is still open): the command was not sent. Try again when the console shows the broker connected.` } };
      }
      const payload = JSON.stringify(parsed.command);
      // Who was asked, before it leaves: an answer may arrive before the broker's acknowledgement, and only
      // these kiosks' answers to this id count.
      const expiresAtMs = Date.parse(expiresAt);
      state.commandSent({ id, cmd: parsed.command.cmd, expected: new Set(expected), expiresAtMs });
      sendOptions.onSending?.({ id, expected, expiresAtMs });
      let timer: TimerHandle | null = null;
      const sentAtMs = clock.now();
      let waitedMs = 0;
      const unconfirmed = new Promise<'timeout'>((resolve) => {
        const check = () => {
          const now = clock.now();
          const silentMs = now - Math.max(sentAtMs, lastHeardMs);
          waitedMs = now - sentAtMs;
          if (silentMs >= PUBLISH_CONFIRM_MS || waitedMs >= PUBLISH_CONFIRM_MAX_MS) return resolve('timeout');
          timer = clock.setTimeout(check, Math.min(PUBLISH_CONFIRM_MS - silentMs, PUBLISH_CONFIRM_MAX_MS - waitedMs));
        };
        timer = clock.setTimeout(check, PUBLISH_CONFIRM_MS);
      });
      try {
        const published = Promise.all(topics.map((t) => client.publishAsync(t, payload, { qos: 1, retain: false, properties: { messageExpiryInterval: commandTtlS } })));
        published.catch(() => undefined);
        if ((await Promise.race([published, unconfirmed])) === 'timeout') {
          const why = waitedMs >= PUBLISH_CONFIRM_MAX_MS ? `within ${PUBLISH_CONFIRM_MAX_MS / 1000} s` : `within ${PUBLISH_CONFIRM_MS / 1000} s, and sent nothing else meanwhile`;
          return { ok: false, error: { code: 'timeout', message: `The broker did not confirm the command ${why}. It may not have reached it; if the broker recovers before ${expiresAt}, kiosks may still run it (command ${id}).` } };
        }
      } catch (error) {
        state.sent.forget(id);
        return { ok: false, error: { code: 'network', message: `The broker did not take the command: ${error instanceof Error ? error.message : String(error)}` } };
      } finally {
        if (timer !== null) clock.clearTimeout(timer);
      }
      logger.info('Fleet console: command sent', { id, cmd: parsed.command.cmd, topics: topics.length, expected: expected.length });
      return { ok: true, id, expected, expiresAt };
    },
    health: () => watch.health(),
    onConnectionChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      stopProbe();
      // What arrived last is acknowledged once written, not handed over again to the next start.
      if (held.length && client.connected) releaseHeld();
      // A broker that does not answer would hold the polite DISCONNECT forever.
      await client.endAsync(!answering).catch(() => undefined);
      stopProbe();
    },
  };
}

/** Repeating timers made of `clock`'s timeouts, in the shape mqtt.js takes for its keep-alive. */
function intervalsOn(clock: Clock): NonNullable<Exclude<IClientOptions['timerVariant'], string>> {
  const running = new Map<number, TimerHandle>();
  let next = 1;
  const set = (fn: () => void, everyMs?: number): number => {
    const id = next++;
    const tick = () => {
      // Rescheduled first: `fn` may clear this very interval (mqtt.js does on a keep-alive timeout).
      running.set(id, clock.setTimeout(tick, everyMs ?? 0));
      fn();
    };
    running.set(id, clock.setTimeout(tick, everyMs ?? 0));
    return id;
  };
  const clear = (id?: number) => {
    const handle = id === undefined ? undefined : running.get(id);
    if (handle !== undefined) clock.clearTimeout(handle);
    if (id !== undefined) running.delete(id);
  };
  return { set, clear } as unknown as NonNullable<Exclude<IClientOptions['timerVariant'], string>>;
}

/** A command id: the console's time and a random part, so ids never repeat across restarts. */
export function newCommandId(nowMs: number): string {
  return `c-${nowMs.toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** The broker's address without any login in it: a label for metrics and the page. */
export function brokerLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'broker';
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
