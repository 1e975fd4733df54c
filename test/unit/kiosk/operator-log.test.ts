/**
 * The operator's log as staff and support read it in main.log to learn what the kiosk did: for each event
 * (a hangup and its cause, a media error, the renderer lost, shutdown, the RTC side ready, the API key,
 * opening hours, holds, the attract screen, a spare held ready) the exact line written, its level,
 * message and fields. Real emulator on 127.0.0.1 with one FakeClock; timestamps are stripped.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS } from '../../../electron/contract.ts';
import { createLogger } from '../../../electron/core/log.ts';
import { kioskOnEmulatorPerTest, type KioskOnEmulator } from '../../helpers/kiosk-on-emulator.ts';
import { driveUntilSettled, until } from '../../helpers/until.ts';

const { setup, closeNow } = kioskOnEmulatorPerTest();

const noRtcWait = { kiosk: { awaitRendererRtc: false } };

/**
 * The lines (timestamp stripped: `LEVEL message {fields}`) whose message is one of `messages`, in the
 * order written. A line whose message went missing or changed is not picked, so the list comes out short.
 */
function said(lines: readonly string[], ...messages: string[]): string[] {
  return lines
    .map((line) => line.replace(/^\S+ /, ''))
    .filter((line) => {
      const message = line.slice(line.indexOf(' ') + 1);
      return messages.some((m) => message === m || message.startsWith(`${m} {`));
    });
}

const HANGUP = ['Hanging up the session', 'Session finished', 'Hangup cause listener failed', 'The renderer reported a media error'];

async function live(h: KioskOnEmulator): Promise<string> {
  const liveId = await h.tap();
  await h.reach('live');
  return liveId;
}

describe('hanging up: why, as the operator reads it', () => {
  it('the visitor’s button reads "renderer request"; another cause is named; a broken cause listener is a warning', async () => {
    const h = await setup(noRtcWait);
    h.kiosk.calls.onHangupCause(() => {
      throw new Error('a broken listener');
    });
    await live(h);
    await h.hangup('idle');
    await until(() => !h.kiosk.calls.running);
    assert.deepEqual(said(h.lines, ...HANGUP), [
      'WARN Hangup cause listener failed {"error":"Error: a broken listener"}',
      'INFO Hanging up the session {"why":"renderer request (idle)"}',
      'INFO Session finished {"phase":"ended"}',
    ]);

    const n = h.lines.length;
    await live(h);
    await h.hangup();
    await until(() => !h.kiosk.calls.running);
    assert.deepEqual(said(h.lines.slice(n), ...HANGUP), [
      'WARN Hangup cause listener failed {"error":"Error: a broken listener"}',
      'INFO Hanging up the session {"why":"renderer request"}',
      'INFO Session finished {"phase":"ended"}',
    ]);
  });

  it('a media error: the renderer’s report (kind and detail), then the hangup naming the kind; the session ends failed', async () => {
    const h = await setup(noRtcWait);
    await live(h);
    await driveUntilSettled(h.clock, h.kiosk.calls.reportMediaError({ kind: 'microphone_denied', message: 'NotAllowedError' }), { stepMs: 10 });
    await until(() => !h.kiosk.calls.running);
    assert.deepEqual(said(h.lines, ...HANGUP), [
      'WARN The renderer reported a media error {"kind":"microphone_denied","detail":"NotAllowedError"}',
      'INFO Hanging up the session {"why":"media error: microphone_denied"}',
      'INFO Session finished {"phase":"failed"}',
    ]);
  });

  it('a media error with no call is still reported, and nothing is hung up', async () => {
    const h = await setup();
    await h.kiosk.calls.reportMediaError({ kind: 'other', message: 'x' });
    assert.deepEqual(said(h.lines, ...HANGUP), ['WARN The renderer reported a media error {"kind":"other","detail":"x"}']);
  });

  it('the renderer lost reads "renderer lost"', async () => {
    const h = await setup(noRtcWait);
    await live(h);
    await driveUntilSettled(h.clock, h.kiosk.calls.resetToAttract(), { stepMs: 10 });
    assert.deepEqual(said(h.lines, 'Hanging up the session'), ['INFO Hanging up the session {"why":"renderer lost"}']);
  });

  it('a call running at shutdown reads "shutdown"', async () => {
    const h = await setup(noRtcWait);
    await live(h);
    await closeNow();
    assert.deepEqual(said(h.lines, ...HANGUP), ['INFO Hanging up the session {"why":"shutdown"}', 'INFO Session finished {"phase":"ended"}']);
  });
});

describe('the renderer’s RTC side', () => {
  it('a report for another call is ignored, the waiting call’s is taken; each names the live id reported', async () => {
    const h = await setup();
    const liveId = await h.tap();
    await h.kiosk.calls.rtcReady({ liveId: 'someone-else' });
    await h.kiosk.calls.rtcReady({ liveId });
    await h.reach('live');
    assert.deepEqual(said(h.lines, 'An RTC-ready report for no waiting session was ignored', 'The renderer joined the RTC channel; sending conn_init'), [
      'INFO An RTC-ready report for no waiting session was ignored {"liveId":"someone-else"}',
      `INFO The renderer joined the RTC channel; sending conn_init {"liveId":"${liveId}"}`,
    ]);
  });
});

describe('the API key', () => {
  it('stored, then cleared, each with where the key now comes from (the key itself never appears)', async () => {
    const h = await setup({ kiosk: { persistApiKey: async () => {} } });
    const key = 'sk-operator-log-0123456789';
    assert.ok((await h.kiosk.key.set(key)).ok);
    assert.ok((await h.kiosk.key.set(null)).ok);
    assert.deepEqual(said(h.lines, 'API key stored', 'Stored API key cleared'), ['INFO API key stored {"source":"stored"}', 'INFO Stored API key cleared {"source":"none"}']);
    assert.equal(h.lines.filter((l) => l.includes(key)).length, 0);
  });
});

describe('opening hours and holds', () => {
  it('closed with the next opening time, told once; open again', async () => {
    const h = await setup();
    const closed = { open: false, nextOpenAt: '2026-11-25T08:00:00.000Z', timeZone: 'Europe/Paris' };
    h.kiosk.availability.setOpening(closed);
    h.kiosk.availability.setOpening({ ...closed }); // the same again: no line
    h.kiosk.availability.setOpening({ open: true, nextOpenAt: null, timeZone: 'Europe/Paris' });
    assert.deepEqual(said(h.lines, 'Opening hours: open', 'Opening hours: closed'), [
      'INFO Opening hours: closed {"nextOpenAt":"2026-11-25T08:00:00.000Z"}',
      'INFO Opening hours: open {"nextOpenAt":null}',
    ]);
  });

  it('held with the reason, told once; taken again', async () => {
    const h = await setup();
    h.kiosk.availability.setHold('updating');
    h.kiosk.availability.setHold('updating');
    h.kiosk.availability.setHold(null);
    assert.deepEqual(said(h.lines, 'New calls held', 'New calls taken again'), ['INFO New calls held {"reason":"updating"}', 'INFO New calls taken again {"reason":null}']);
  });
});

describe('debug lines', () => {
  it('each attract report as the renderer sent it, and a spare held ready with its live id', async () => {
    // The helper records info and up; these lines are debug, so this kiosk gets its own logger.
    const debug: string[] = [];
    const h = await setup({ config: { prewarm: { mode: 'on-approach' } }, kiosk: { logger: createLogger({ level: 'debug', sink: (line) => debug.push(line) }) } });
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await until(() => h.kiosk.spares.phase === 'ready');
    await h.dispatch(CHANNELS.attractReport, { showing: false, present: false });
    const [spare] = h.emu.listSessions();
    assert.ok(spare);
    assert.deepEqual(said(debug, 'Attract report', 'spare: control socket open, holding conn_init'), [
      'DEBUG Attract report {"showing":false,"present":null}', // replayed at start-up: nothing reported yet
      'DEBUG Attract report {"showing":true,"present":true}',
      `DEBUG spare: control socket open, holding conn_init {"liveId":"${spare.id}"}`,
      'DEBUG Attract report {"showing":false,"present":false}',
    ]);
  });
});
