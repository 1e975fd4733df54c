/**
 * Crash recovery, for real: a child process runs a live session against an emulator in
 * ANOTHER process; the child is killed with SIGKILL mid-call (no hangup, no cleanup); the next start
 * finds the leftover session, hangs it up with type 5 and no conn_init, and records its final billing
 * in the ledger marked recovered. The emulator's reconnect grace is 300 s here, so only our hangup can
 * have ended the session.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../electron/core/clock.ts';
import type { EmulatedSession } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';
import type { SessionRecord } from '../../electron/operations/ledger.ts';
import { jsonFilePersistence } from '../../electron/operations/settings.ts';
import { createStaffOps } from '../../electron/operations/staff-ops.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const REPO = join(import.meta.dirname, '..', '..');
const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const children: ChildProcess[] = [];
const services: Kiosk[] = [];
after(async () => {
  await Promise.all(services.map((s) => s.shutdown()));
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function startEmulatorChild(): Promise<{ child: ChildProcess; baseUrl: string; apiKey: string; get(liveId: string): Promise<EmulatedSession | null> }> {
  const child = fork(join(FIXTURES, 'emulator-child.ts'), [], { execArgv: ['--import', 'tsx'], cwd: REPO, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', (msg: { ready?: boolean; baseUrl: string; apiKey: string }) => {
      resolve({
        child,
        baseUrl: msg.baseUrl,
        apiKey: msg.apiKey,
        get: (liveId) =>
          new Promise((res) => {
            child.once('message', (m: { session: EmulatedSession | null }) => res(m.session));
            child.send({ get: liveId });
          }),
      });
    });
  });
}

function runKioskChild(baseUrl: string, apiKey: string, dataDir: string): Promise<{ child: ChildProcess; liveId: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, 'kiosk-child.ts'), baseUrl, apiKey, dataDir], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the kiosk child did not go live: ${out}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^LIVE (\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, liveId: m[1]! });
      } else if (/^(FAILED|END) /m.test(out)) {
        clearTimeout(timer);
        reject(new Error(`the kiosk child's session ended early: ${out}`));
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`the kiosk child exited early (${code ?? signal}): ${out}`)));
  });
}

describe('crash recovery', () => {
  it('SIGKILL mid-call: the next start hangs the leftover up (type 5, no conn_init) and records it as recovered', async () => {
    const emu = await startEmulatorChild();
    const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-crash-'));
    const file = { service: { surface: 'direct', baseUrl: emu.baseUrl }, callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } };
    const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
    await persistence.write(file);

    const { child, liveId } = await runKioskChild(emu.baseUrl, emu.apiKey, dataDir);
    const journalPath = join(dataDir, 'current-session.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8'));
    assert.deepEqual([journal.liveId, journal.surface, journal.serviceUrl, journal.callMode, typeof journal.liveAtMs], [liveId, 'direct', emu.baseUrl, 'audio', 'number']);

    // Let some billable time pass, then kill it the hard way.
    await new Promise((r) => setTimeout(r, 2_500));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    const orphan = await emu.get(liveId);
    assert.equal(orphan?.status, 'on_live', 'the killed kiosk left its session running (billing)');
    assert.equal(existsSync(journalPath), true, 'the journal survived the crash');

    // The next start: the same wiring as index.ts, recovery before the attract screen.
    const kiosk = await createKiosk({ awaitRendererRtc: false, config: resolveConfig(persistence.read(), {}, { appRoot: REPO }), apiKey: emu.apiKey, apiKeySource: 'env' });
    services.push(kiosk);
    const ops = createStaffOps({
      kiosk,
      channels: createChannelRegistry(),
      dataDir,
      persistence,
      env: {},
      appRoot: REPO,
      clock: systemClock,
      version: 'test',
      logTail: () => [],
      platform: { getOpenAtLogin: () => null, setOpenAtLogin() {}, exitKiosk() {}, restart() {} },
    });
    const outcome = await ops.recover();
    assert.ok(outcome);
    assert.equal(outcome.liveId, liveId);
    assert.equal(outcome.hungUp, true);

    const ended = (await emu.get(liveId))!;
    assert.equal(ended.status, 'ended');
    assert.equal(ended.hangupReason, 'user_end', 'ended by our hangup, not by the reconnect timeout');
    assert.equal(ended.connInits, 1, 'recovery sent no conn_init');
    assert.deepEqual(ended.clientMessages.at(-1), { type: 5, seq_id: 1 }, 'the recovery socket sent only the hangup');
    assert.ok((ended.billedSeconds ?? 0) >= 2, `billed ${ended.billedSeconds}`);

    const records = ops.ledger.read().records as SessionRecord[];
    assert.equal(records.length, 1);
    const rec = records[0]!;
    assert.deepEqual(
      [rec.live_id, rec.recovered, rec.end_reason, rec.ended_by, rec.surface, rec.call_mode, rec.billed_seconds, rec.credits_cost],
      [liveId, true, 'app_crash', 'client', 'direct', 'audio', ended.billedSeconds, ended.creditsCost],
    );
    assert.equal(rec.live_at, new Date(journal.liveAtMs).toISOString());
    assert.equal(existsSync(journalPath), false, 'the journal is cleared after recovery');
    assert.equal(await ops.recover(), null, 'nothing left to recover');
  });
});
