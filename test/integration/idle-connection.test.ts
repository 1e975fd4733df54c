/**
 * A tap after a pause: the kiosk's create must not go out on a connection the service is closing. Servers
 * close idle keep-alive connections (Node's and Apache's after 5 s, announced in `Keep-Alive: timeout=`),
 * and a request written as the server closes meets a reset. The create is never retried (a retry could open
 * a second room), so such a tap ended on "The connection was lost" for the visitor. The emulator's `idleCloseMs`
 * knob models that close at its worst moment (a request in its last second meets a reset); the kiosk runs
 * in demo mode against it over real loopback HTTP and WebSocket, its REST timers on a FakeClock. The pause
 * is real time: connections idle on the operating system's clock.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startEmulator } from '../../electron/emulator/index.ts';
import { kioskOnEmulator } from '../helpers/kiosk-on-emulator.ts';
import { realDelay } from '../helpers/until.ts';

const IDLE_CLOSE_MS = 2_000; // announced as timeout=2: a client keeping a second in hand lets go after 1 s
const PAUSE_MS = 1_500; // inside the server's last second before its close

describe('a tap after a pause (the service closes idle connections)', () => {
  it('the emulator models the race: a plain keep-alive client that reuses a connection idle in the close\'s last second meets a reset', async () => {
    const emu = await startEmulator({ knobs: { idleCloseMs: IDLE_CLOSE_MS } });
    const agent = new http.Agent({ keepAlive: true });
    const get = () =>
      new Promise<{ status: number; keepAlive: string | undefined }>((resolve, reject) => {
        const req = http.get(`${emu.baseUrl}/live/v1/lives/nothing`, { agent, headers: { authorization: `Token ${emu.apiKey}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, keepAlive: String(res.headers['keep-alive']) }));
        });
        req.on('error', reject);
      });
    try {
      const first = await get();
      assert.equal(first.keepAlive, 'timeout=2', 'the close is announced');
      await realDelay(PAUSE_MS);
      await assert.rejects(get(), { code: 'ECONNRESET' });
    } finally {
      agent.destroy();
      await emu.close();
    }
  });

  it('the kiosk\'s second visitor, tapping after the pause, is live: the create went out on a connection the service was not closing', async () => {
    const h = await kioskOnEmulator({ knobs: { idleCloseMs: IDLE_CLOSE_MS }, kiosk: { awaitRendererRtc: false } });
    try {
      await h.tap();
      await h.reach('live');
      await h.hangup(); // its billing read-back leaves a pooled connection behind
      await realDelay(PAUSE_MS);
      const second = await h.tap();
      await h.reach('live');
      assert.equal(h.session(second).status, 'on_live');
      assert.deepEqual(h.warnings, [], 'nothing failed on the way');
      await h.hangup();
    } finally {
      await h.close();
    }
  });
});
