/**
 * A new session right after the previous one ended (found by the soak, bench/soak.ts): the UI is told the
 * session is over (`ended`) while the service still finishes its cleanup (closing sockets, a hangup socket
 * in flight). A start in that window must wait for the cleanup, not answer "A session is already running".
 * The same holds while the service has not yet answered the hangup (`ending`): the renderer already shows
 * the end screen, and a quick next visitor (an adult kiosk's gate passed by keyboard) taps in that window.
 * The kiosk's services (createKiosk) in demo mode against the real emulator, real time, fast knobs.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChannelResults, CHANNELS, KioskEvent, Result } from '../../electron/contract.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
type StartResult = Result<ChannelResults[typeof CHANNELS.sessionStart]>;

const services: Kiosk[] = [];
after(async () => {
  await Promise.all(services.map((s) => s.shutdown()));
});

function nextPhase(kiosk: Kiosk, phase: string, timeoutMs = 8_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${phase} (state ${kiosk.calls.state.phase})`));
    }, timeoutMs);
    const off = kiosk.events.onEvent((e: KioskEvent) => {
      if (e.type === 'state' && e.state.phase === phase) {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  });
}

/** A demo kiosk against the real emulator (no warm-up; `endingMs` between `ending` and `ended`), in a live call. */
async function liveKiosk(endingMs: number): Promise<Kiosk> {
  const kiosk = await createKiosk({ awaitRendererRtc: false,
    config: resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } }, {}),
    apiKey: null,
    apiKeySource: 'none',
    emulatorKnobs: { warmupMs: { audio: 0, video: 0 }, endingMs },
  });
  services.push(kiosk);
  const live = nextPhase(kiosk, 'live');
  assert.equal((await kiosk.calls.start()).ok, true);
  await live;
  return kiosk;
}

/** After the second start: two sessions on the service, the first ended and the second live; then it ends. */
async function secondIsLive(kiosk: Kiosk): Promise<void> {
  const sessions = kiosk.connection.emulator!.listSessions();
  assert.equal(sessions.length, 2);
  assert.deepEqual(sessions.map((s) => s.status).sort(), ['ended', 'on_live']);
  await kiosk.calls.hangup();
  assert.equal(kiosk.calls.state.phase, 'ended');
}

describe('the call orchestrator: starting again right after an end', () => {
  it('a start issued the moment the UI sees `ended` waits for the cleanup and starts the next session', async () => {
    const kiosk = await liveKiosk(20);

    // The renderer's quickest possible reaction: start again in the very event that says `ended`.
    let restart: Promise<StartResult> | null = null;
    const off = kiosk.events.onEvent((e) => {
      if (e.type === 'state' && e.state.phase === 'ended' && !restart) restart = kiosk.calls.start();
    });
    const secondLive = nextPhase(kiosk, 'live');
    await kiosk.calls.hangup();
    off();
    assert.ok(restart, 'the end was seen');
    const result = await (restart as unknown as Promise<StartResult>);
    assert.equal(result.ok, true, `the second start was refused: ${JSON.stringify(result)}`);
    await secondLive;
    await secondIsLive(kiosk);
  });

  it('a start issued while the previous call is still ending (the hangup not yet answered) waits and starts the next session', async () => {
    const kiosk = await liveKiosk(1_500);

    const ending = nextPhase(kiosk, 'ending');
    const hangup = kiosk.calls.hangup();
    await ending;
    const secondLive = nextPhase(kiosk, 'live', 15_000);
    const result = await kiosk.calls.start();
    assert.equal(result.ok, true, `the start during ending was refused: ${JSON.stringify(result)}`);
    await hangup;
    await secondLive;
    await secondIsLive(kiosk);
  });
});
