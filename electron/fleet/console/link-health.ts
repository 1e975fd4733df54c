/**
 * What the console knows about its own broker connection beyond "connected": since when it has been
 * unreachable (every row is then the last known state, not the present), whether its session was taken
 * over or lost, the broker's own count of dropped messages, and the last time anything arrived.
 *
 *  - A takeover: a broker that says so disconnects the console with reason 0x8E (session taken over) when
 *    another connection uses its client id. The shipped broker set-up (ops/mosquitto) ties each login to its own
 *    client id, so only the console's own login can do it (a second console started with it). Mosquitto
 *    2.0.11 closes the connection without saying why: there the lost session below is what shows.
 *  - A lost session: once the console has had a session in this run, a reconnect whose CONNACK says no
 *    session is present means the broker no longer had it (taken with a clean start, expired, or a broker
 *    restart without persistence): whatever was queued for the console meanwhile (calls ended, answers)
 *    is gone.
 *  - The broker's drops and heartbeat from `$SYS` (the console's login must be allowed to read
 *    `$SYS/broker/#`, as the shipped ACL does): `publish/messages/dropped` counts messages the broker threw
 *    away for any client at a queue or in-flight limit; `uptime` changes every `sys_interval`, so a console
 *    that hears nothing for several intervals has stopped receiving.
 *
 * Each problem is logged at error level (the console runs at warn) and kept as a notice for the page.
 */
import type { IConnackPacket, IDisconnectPacket, MqttClient } from 'mqtt';
import { silentLogger, type Logger } from '../../core/log.ts';
import type { BrokerFigures } from './metrics.ts';

export const SYS_DROPPED = '$SYS/broker/publish/messages/dropped';
export const SYS_UPTIME = '$SYS/broker/uptime';
/** MQTT 5 DISCONNECT reason: another connection took this client id's session. */
export const SESSION_TAKEN_OVER = 0x8e;

export interface LinkHealth extends BrokerFigures {
  connected: boolean;
  /** Since when the broker has been unreachable (the console's clock, ISO); null while connected. */
  lostAt: string | null;
  /** The latest problem with the console's own session, in words, and when; null if none was seen. */
  notice: { at: string; message: string } | null;
}

export interface LinkWatch {
  health(): LinkHealth;
}

export function watchLink(client: MqttClient, options: { broker: string; now(): number; logger?: Logger }): LinkWatch {
  const logger = options.logger ?? silentLogger;
  const iso = () => new Date(options.now()).toISOString();
  let hadSession = false;
  // Unreachable from the start until the first connection.
  let lostAt: string | null = iso();
  let droppedMessages: number | null = null;
  let lastMessageAtMs: number | null = null;
  let takeovers = 0;
  let sessionsLost = 0;
  let notice: LinkHealth['notice'] = null;

  const problem = (message: string, data: Record<string, unknown>) => {
    notice = { at: iso(), message };
    logger.error(`Fleet console: ${message}`, data);
  };

  client.on('connect', (connack: IConnackPacket) => {
    lostAt = null;
    if (hadSession && !connack.sessionPresent) {
      sessionsLost++;
      problem('the broker no longer had this console\'s session: what was queued for it while it was away (calls that ended, answers) is lost. Another connection may have used its client id with a clean start, or the broker restarted without persistence.', { sessionsLost });
    }
    hadSession = true;
    client.subscribe([SYS_DROPPED, SYS_UPTIME], { qos: 0 }, (error) => {
      if (error) logger.warn('Fleet console: the broker\'s $SYS counters cannot be read (messages lost are not known)', { error: error.message });
    });
  });
  client.on('disconnect', (packet: IDisconnectPacket) => {
    if (packet.reasonCode !== SESSION_TAKEN_OVER) return;
    takeovers++;
    problem('another connection took over this console\'s broker session (its client id). With the shipped broker set-up only the console\'s own login can: is a second console running with it?', { takeovers });
  });
  client.on('close', () => {
    lostAt ??= iso();
  });
  client.on('message', (topic, payload) => {
    lastMessageAtMs = options.now();
    if (topic !== SYS_DROPPED) return;
    const n = Number(payload.toString('utf8'));
    if (Number.isSafeInteger(n) && n >= 0) droppedMessages = n;
  });

  return {
    health: () => ({ broker: options.broker, connected: client.connected, lostAt: client.connected ? null : (lostAt ?? iso()), notice, droppedMessages, lastMessageAtMs, takeovers, sessionsLost }),
  };
}
