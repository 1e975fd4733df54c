/**
 * The ledger under a real crash: a child process appends records in a tight loop and is killed with
 * SIGKILL wherever it happens to be. Every record before the kill is readable, in order, with no gap;
 * at most the last line is torn; and the next run appends cleanly after it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLedger, type SessionRecord } from '../../electron/operations/ledger.ts';

const REPO = join(import.meta.dirname, '..', '..');

describe('ledger crash', () => {
  it('SIGKILL while appending leaves every earlier record readable and the next append clean', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-ledger-kill-'));
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'ledger-writer-child.ts'), dir], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the writer never started')), 60_000);
      child.stdout.on('data', (d: Buffer) => d.toString().includes('READY') && (clearTimeout(timer), resolve()));
    });
    // Let it write a while (a size, not a time: bounded and load-independent).
    const file = () => join(dir, readdirSync(dir)[0]!);
    const deadline = Date.now() + 60_000;
    while (statSync(file()).size < 300_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;

    const ledger = createLedger({ dir });
    const first = ledger.read();
    const ids = (first.records as SessionRecord[]).map((r) => r.live_id);
    assert.ok(ids.length >= 50, `only ${ids.length} records`);
    assert.deepEqual(ids, ids.map((_, i) => `L${i}`), 'in order, no gap');
    assert.ok(first.skipped <= 1, `skipped ${first.skipped}`);

    const at = new Date().toISOString();
    await ledger.append({ ...(first.records[0] as SessionRecord), live_id: 'after-crash', start_at: at, live_at: at, end_at: at });
    const second = ledger.read();
    assert.equal(second.records.at(-1)!.live_id, 'after-crash');
    assert.equal(second.records.length, ids.length + 1);
    assert.equal(second.skipped, first.skipped);
  });
});
