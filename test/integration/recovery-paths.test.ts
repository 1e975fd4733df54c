/**
 * The other ways a leftover session can look on the next start (the SIGKILL case is crash-recovery.test.ts):
 * already ended (read the billing, send nothing), gone (404), and a demo session whose emulator died with
 * the app. In-process emulator, real HTTP and WebSocket.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../electron/core/clock.ts';
import { hangupWithoutConnInit, queryUntilEnded } from '../../electron/core/remote-hangup.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import { startEmulator } from '../../electron/emulator/index.ts';
import { createLedger, type SessionRecord } from '../../electron/operations/ledger.ts';
import { recoverLeftover, type CurrentSession } from '../../electron/operations/recovery.ts';

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const emulator = await startEmulator({ host: '127.0.0.1', port: 0, knobs: { endingMs: 20 } });
after(() => emulator.close());
const client = new ServiceClient({ target: { surface: 'direct', baseUrl: emulator.baseUrl, apiKey: emulator.apiKey } });

function leftover(dir: string, over: Partial<CurrentSession>): string {
  const path = join(dir, 'current-session.json');
  writeFileSync(path, JSON.stringify({ v: 1, liveId: 'x', surface: 'direct', serviceUrl: emulator.baseUrl, callMode: 'audio', startAtMs: Date.now() - 60_000, liveAtMs: null, ...over }));
  return path;
}

async function recover(dir: string, path: string, withClient = true) {
  const ledger = createLedger({ dir: join(dir, 'ledger') });
  const outcome = await recoverLeftover({ path, ledger, clientFor: () => (withClient ? client : null), clock: systemClock, pollMs: 50 });
  return { outcome, records: ledger.read().records as SessionRecord[] };
}

describe('recovery paths', () => {
  it('a session that already ended: nothing is sent, its billing is recorded', async () => {
    const id = (await client.createSession({ call_mode: 'audio', avatar: { persona: 'P', image_uri: TINY_PNG } })).live.id;
    assert.equal(await hangupWithoutConnInit(client, id), true);
    await queryUntilEnded(client, id, { pollMs: 20 });
    const messagesBefore = emulator.getSession(id)!.clientMessages.length;
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-rec-'));
    const { outcome, records } = await recover(dir, leftover(dir, { liveId: id }));
    assert.equal(outcome!.hungUp, false);
    assert.equal(emulator.getSession(id)!.clientMessages.length, messagesBefore, 'no socket was opened');
    assert.deepEqual([records[0]!.recovered, records[0]!.ended_by, records[0]!.billed_seconds, records[0]!.credits_cost], [true, 'server', 0, 0]);
    assert.equal(existsSync(join(dir, 'current-session.json')), false);
  });

  it('a session the service no longer knows (404): recorded with an unknown cost and the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-rec-'));
    const { outcome, records } = await recover(dir, leftover(dir, { liveId: 'no-such-session', liveAtMs: Date.now() - 30_000 }));
    assert.equal(outcome!.hungUp, false);
    assert.deepEqual([records[0]!.credits_cost, records[0]!.billed_seconds, records[0]!.error_code, records[0]!.end_reason], ['unknown', null, 'not_found', 'app_crash']);
  });

  it('a demo session (its emulator died with the app): recorded as unknown, never queried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-rec-'));
    const { records } = await recover(dir, leftover(dir, { liveId: 'demo-1', surface: 'demo', serviceUrl: null }), false);
    assert.deepEqual([records[0]!.surface, records[0]!.credits_cost, records[0]!.error_code], ['demo', 'unknown', 'unreachable']);
  });

  it('an unreadable journal is removed and nothing is recorded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-rec-'));
    const path = join(dir, 'current-session.json');
    writeFileSync(path, '{"v":1,"liveId":');
    const { outcome, records } = await recover(dir, path);
    assert.equal(outcome, null);
    assert.deepEqual(records, []);
    assert.equal(existsSync(path), false);
  });
});
