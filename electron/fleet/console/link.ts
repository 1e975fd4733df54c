/**
 * The console's connection to the fleet's broker: it reads every kiosk's status, events and command
 * answers into a FleetState, and sends commands to one kiosk, a group or the whole fleet.
 *
 * - A persistent session (clean: false, a fixed client id, QoS 1 subscriptions, a session expiry): the
 *   broker keeps the events and answers that arrive while the console is away, and hands them over
 *   when it is back.
 * - Commands are checked here with the kiosk's own parser (commands.ts) before they leave, so the page
 *   gets the same refusal the kiosk would give; each carries `expiresAt` and goes out with the MQTT 5
 *   message expiry, never retained (a retained command would run again at every reconnect).
 */
import { randomBytes } from 'node:crypto';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { silentLogger, type Logger, addSecret } from '../../core/log.ts';
import { parseCommand } from '../commands.ts';
import { pinRefusal } from '../feed-binding.ts';
import type { FleetState } from './state.ts';
import type { CommandResponse, CommandTarget } from './view.ts';

/** How long a command may wait in the broker for an offline kiosk. */
export const DEFAULT_COMMAND_TTL_S = 120;
/** How long the broker keeps the console's session (its queued messages) while it is away. */
export const SESSION_EXPIRY_S = 24 * 60 * 60;

export interface ConsoleLinkOptions {
  url: string;
  topicPrefix: string;
  clientId: string;
  username?: string;
  password?: string;
  ca?: Buffer;
  state: FleetState;
  now(): number;
  logger?: Logger;
  commandTtlS?: number;
  reconnectMs?: number;
}

export interface ConsoleLink {
  readonly connected: boolean;
  /** Resolves once the first connection is up (rejects after `timeoutMs`). */
  ready(timeoutMs: number): Promise<void>;
  send(target: CommandTarget, command: Record<string, unknown>): Promise<CommandResponse>;
  onConnectionChange(listener: (connected: boolean) => void): () => void;
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
    keepalive: 30,
    connectTimeout: 15_000,
    reconnectPeriod: options.reconnectMs ?? 3000,
    rejectUnauthorized: true,
  };
  logger.info('Fleet console: connecting to the broker', { url: options.url, clientId: options.clientId, username: options.username ?? null });
  const client: MqttClient = connect(options.url, clientOptions);
  const listeners = new Set<(connected: boolean) => void>();
  const statusTopic = new RegExp(`^${escape(prefix)}/([^/]+)/(status|events|cmd/result)$`);

  client.on('connect', () => {
    logger.info('Fleet console: connected');
    // Subscribed again on each connect: a broker that lost the session (restart without persistence)
    // would otherwise leave the console deaf.
    const topics = [`${prefix}/+/status`, `${prefix}/+/events`, `${prefix}/+/cmd/result`];
    client.subscribe(topics, { qos: 1 }, (error, _granted, suback) => {
      // mqtt.js turns a refusal into an error and leaves `granted` at the QoS asked for: the SUBACK's
      // reason codes (0x80 and above: refused, 0x87 not authorized under MQTT 5) name the topics.
      const codes = (suback?.granted ?? []) as number[];
      const refused = topics.filter((_, i) => (codes[i] ?? 0) >= 0x80);
      if (error || refused.length) logger.error('Fleet console: the broker refused a subscription (check the operator ACL)', { topics: refused });
    });
    for (const l of listeners) l(true);
  });
  client.on('close', () => {
    for (const l of listeners) l(false);
  });
  client.on('error', (error) => logger.warn('Fleet console: broker error', { error: error.message }));
  client.on('message', (topic, payload, packet) => {
    const m = statusTopic.exec(topic);
    if (!m) return;
    const kioskId = m[1]!;
    if (kioskId.startsWith('_')) return; // fleet-wide and group command topics, not kiosks
    if (m[2] === 'status') state.onStatus(kioskId, payload, packet.retain);
    else if (m[2] === 'events') state.onEvent(kioskId, payload);
    else state.onResult(kioskId, payload);
  });

  return {
    get connected() {
      return client.connected;
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
    async send(target, command) {
      const id = `c-${options.now().toString(36)}-${randomBytes(4).toString('hex')}`;
      const expiresAt = new Date(options.now() + ttlS * 1000).toISOString();
      const body = { ...command, id, expiresAt };
      const parsed = parseCommand(JSON.stringify(body));
      if (!parsed.ok) return { ok: false, error: { code: 'invalid_request', message: parsed.message } };
      let topics: string[];
      let expected: string[];
      if ('kiosks' in target) {
        const bad = target.kiosks.find((k) => !/^[A-Za-z0-9_.-]{1,64}$/.test(k) || k.startsWith('_'));
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
      const payload = JSON.stringify(parsed.command);
      try {
        await Promise.all(topics.map((t) => client.publishAsync(t, payload, { qos: 1, retain: false, properties: { messageExpiryInterval: ttlS } })));
      } catch (error) {
        return { ok: false, error: { code: 'network', message: `The broker did not take the command: ${error instanceof Error ? error.message : String(error)}` } };
      }
      logger.info('Fleet console: command sent', { id, cmd: parsed.command.cmd, topics: topics.length, expected: expected.length });
      return { ok: true, id, expected, expiresAt };
    },
    onConnectionChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      await client.endAsync().catch(() => undefined);
    },
  };
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
