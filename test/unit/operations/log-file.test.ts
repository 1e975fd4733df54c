import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addSecret } from '../../../electron/core/log.ts';
import { createMainLog } from '../../../electron/operations/log-file.ts';

describe('main log file (electron-log)', () => {
  it('writes redacted lines to main.log; the tail is the last 200 lines', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-log-'));
    const secret = 'sk-log-SECRET-1234567890';
    addSecret(secret);
    const log = createMainLog({ dir, console: false, logId: `t1-${Date.now()}` });
    log.logger.info(`Using key ${secret}`, { rtc: { token: 'tok-abcdef-123456' } });
    log.logger.error('Authorization: Token abc.def-ghi');
    for (let i = 0; i < 250; i++) log.logger.info(`line ${i}`);
    const text = readFileSync(join(dir, 'main.log'), 'utf8');
    assert.ok(!text.includes(secret) && !text.includes('tok-abcdef-123456') && !text.includes('abc.def-ghi'), text.slice(0, 500));
    assert.match(text, /INFO Using key \*\*\* \{"rtc":\{"token":"\*\*\*"\}\}/);
    assert.match(text, /ERROR Authorization: Token \*\*\*/);
    const tail = log.tail();
    assert.equal(tail.length, 200);
    assert.match(tail[199]!, /INFO line 249$/);
    assert.match(tail[0]!, /INFO line 50$/);
  });

  it('rotates by size: main.log becomes main.old.log and a new file starts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-log-'));
    const log = createMainLog({ dir, console: false, maxSizeBytes: 4_000, logId: `t2-${Date.now()}` });
    for (let i = 0; i < 100; i++) log.logger.info(`filler ${i} ${'x'.repeat(60)}`);
    assert.equal(existsSync(join(dir, 'main.old.log')), true);
    assert.ok(readFileSync(join(dir, 'main.log')).length <= 4_000 + 200);
    assert.match(log.tail(1)[0]!, /filler 99/);
  });

  it('the tail of a missing file is empty', () => {
    assert.deepEqual(createMainLog({ dir: join(tmpdir(), 'kiosk-no-such-dir-x'), console: false, logId: 't3' }).tail(), []);
  });
});
