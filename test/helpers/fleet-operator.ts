/**
 * The operator's side of one kiosk on a real broker (the update tests over the fleet link): everything the
 * kiosk publishes is recorded, a command is sent as the fleet console sends it (with an MQTT 5 message
 * expiry) and its answer awaited, and a status is awaited while the kiosk's fake clock moves (the kiosk
 * publishes its status at most once a fake second).
 */
import { connectAsync } from 'mqtt';
import type { FakeClock } from './fake-clock.ts';
import { PREFIX, type Broker } from './mosquitto.ts';
import { realDelay, until } from './until.ts';

/** A JSON body as the kiosk published it (tests read its fields freely). */
type Body = Record<string, any>;

export interface KioskOperator {
  /** Every status the kiosk published, oldest first. */
  statuses(): Body[];
  /** Every command answer, oldest first. */
  results(): Body[];
  /** Send a command to the kiosk and wait (15 s at most) for its answer. */
  command(body: Record<string, unknown>): Promise<Body>;
  /** Wait (30 s at most) until a status matches, moving `clock` a second at a time. */
  statusUntil(predicate: (s: Body) => boolean, message: string): Promise<void>;
  end(): Promise<void>;
}

export async function operateKiosk(broker: Broker, kioskId: string, clock: FakeClock, login = { username: 'operator', password: 'op-pass' }): Promise<KioskOperator> {
  const op = await connectAsync(broker.url, { ...login, protocolVersion: 5, reconnectPeriod: 0 });
  const seen: Array<{ topic: string; body: Body }> = [];
  op.on('message', (topic, payload) => seen.push({ topic, body: JSON.parse(payload.toString()) as Body }));
  await op.subscribeAsync(`${PREFIX}/${kioskId}/#`, { qos: 1 });
  const on = (topic: string) => seen.filter((m) => m.topic === `${PREFIX}/${kioskId}/${topic}`).map((m) => m.body);
  return {
    statuses: () => on('status'),
    results: () => on('cmd/result'),
    async command(body) {
      const before = on('cmd/result').length;
      // Every command carries an expiry (the MQTT 5 message expiry, as the fleet console sends it).
      await op.publishAsync(`${PREFIX}/${kioskId}/cmd`, JSON.stringify(body), { qos: 1, properties: { messageExpiryInterval: 60 } });
      await until(() => on('cmd/result').length > before, { realTimeoutMs: 15_000, message: `an answer to ${String(body.cmd)}` });
      return on('cmd/result')[before]!;
    },
    async statusUntil(predicate, message) {
      const deadline = Date.now() + 30_000;
      while (!on('status').some(predicate)) {
        if (Date.now() > deadline) throw new Error(`timed out: ${message}; last status ${JSON.stringify(on('status').at(-1))}`);
        await clock.advance(1_000);
        await realDelay(20);
      }
    },
    async end() {
      await op.endAsync();
    },
  };
}
