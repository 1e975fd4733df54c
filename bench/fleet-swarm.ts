/**
 * Simulated kiosks for `npm run bench:fleet`: `count` fleet links (the real mqtt-link.ts, each with its
 * own on-disk event queue) in this one process, each publishing a ledger-sized event every
 * `eventEveryMs` and changing its status (phase) as often. Prints `{"ready":n}` once all are connected.
 * argv: <brokerUrl> <firstIndex> <count> <dataRoot> <eventEveryMs>
 */
import { join } from 'node:path';
import { systemClock } from '../electron/core/clock.ts';
import { mqttSchema } from '../electron/kiosk/fleet-config.ts';
import { startMqttLink, type MqttLink } from '../electron/fleet/mqtt-link.ts';

const [url, first, count, dataRoot, every] = process.argv.slice(2) as [string, string, string, string, string];
const phases = ['idle', 'creating', 'live', 'ended'];
const links: MqttLink[] = [];
const noControl = {
  inCall: () => false,
  endCall: async () => {},
  reload: () => {},
  restart: () => {},
  screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }),
  apply: async () => ({ applied: [] }),
};
for (let i = Number(first); i < Number(first) + Number(count); i++) {
  const id = `kiosk-${i}`;
  let tick = 0;
  const link = startMqttLink({
    settings: mqttSchema.parse({ url, username: id, password: `pw-${id}`, kioskId: id, topicPrefix: 'ak' }),
    kioskId: id,
    dataDir: join(dataRoot, id),
    clock: systemClock,
    reconnectMs: 1000,
    control: noControl,
    status: () => ({ version: '1.0.0', mode: 'direct', phase: phases[tick % phases.length]!, cast: ['ava'], open: true, nextChangeAt: null, today: { sessions: tick, credits: tick * 2 }, lastErrorCode: null }),
  });
  links.push(link);
  // Spread the kiosks over the period so the broker sees a steady flow, not bursts.
  setTimeout(() => {
    setInterval(() => {
      tick++;
      link.statusChanged();
      link.publishRecord({ kind: 'session', v: 1, start_at: new Date().toISOString(), end_at: new Date().toISOString(), live_id: `live-${id}-${tick}`, end_reason: 'user_end', billed_seconds: 60, credits_cost: 2 });
    }, Number(every));
  }, Math.random() * Number(every));
}
const started = Date.now();
const wait = setInterval(() => {
  const up = links.filter((l) => l.connected).length;
  if (up === links.length || Date.now() - started > 30_000) {
    clearInterval(wait);
    process.stdout.write(`${JSON.stringify({ ready: up })}\n`);
  }
}, 50);
process.on('SIGTERM', () => void Promise.all(links.map((l) => l.close())).then(() => process.exit(0)));
