/**
 * KioskService's exported helpers: the venue's call-length cap on the live countdown, and the attract
 * screen's image loader (local files as data: URLs, sized before they are read; no remote pictures).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, closeSync, ftruncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionState } from '../../../electron/core/session-types.ts';
import { capCallLength, readImageAsDataUrl } from '../../../electron/kiosk/kiosk-service.ts';

describe('capCallLength', () => {
  const live = { phase: 'live' as const, liveId: 'L', sinceMs: 1_000, endsAtMs: 601_000 };

  it('0 (or no) maximum call length means no cap', () => {
    assert.deepEqual(capCallLength(live, 0), live);
    assert.deepEqual(capCallLength({ ...live, phase: 'reconnecting', attempt: 2 } as SessionState, 0), { ...live, phase: 'reconnecting', attempt: 2 });
  });

  it('a cap exactly at the service’s own end leaves the countdown as it is; one second sooner moves it', () => {
    assert.deepEqual(capCallLength(live, 600), live);
    assert.deepEqual(capCallLength(live, 599), { ...live, endsAtMs: 600_000 });
  });
});

describe('readImageAsDataUrl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-attract-img-'));

  it('names each picture type by its extension, whatever its case', async () => {
    const bytes = Buffer.from([1, 2, 3]);
    for (const [name, mime] of [['a.jpeg', 'image/jpeg'], ['b.JPG', 'image/jpeg'], ['c.webp', 'image/webp'], ['d.PNG', 'image/png']] as const) {
      writeFileSync(join(dir, name), bytes);
      assert.equal(await readImageAsDataUrl(join(dir, name)), `data:${mime};base64,AQID`, name);
    }
  });

  it('remote pictures are not loaded (http and https, any case); a local folder merely named like a URL is read', async () => {
    assert.equal(await readImageAsDataUrl('http://cdn.example.com/a.png'), null);
    assert.equal(await readImageAsDataUrl('HTTPS://cdn.example.com/a.png'), null);
    const odd = join(dir, 'https:', 'e.png');
    mkdirSync(join(dir, 'https:'), { recursive: true });
    writeFileSync(odd, Buffer.from([0xff]));
    assert.equal(await readImageAsDataUrl(odd), 'data:image/png;base64,/w==');
  });

  it('a folder or a picture over 20 MB is refused with an error naming the avatar picture', async () => {
    const folder = join(dir, 'folder.png');
    mkdirSync(folder, { recursive: true });
    await assert.rejects(readImageAsDataUrl(folder), { code: 'invalid_request', message: `The avatar picture ${folder} is a folder, not a file.` });
    const huge = join(dir, 'huge.png');
    const fd = openSync(huge, 'w');
    ftruncateSync(fd, 20 * 1024 * 1024 + 1); // sparse: nothing is written
    closeSync(fd);
    await assert.rejects(readImageAsDataUrl(huge), { code: 'invalid_request', message: `The avatar picture ${huge} is 20.0 MB; the limit is 20 MB.` });
    const limit = join(dir, 'limit.png');
    const fd2 = openSync(limit, 'w');
    ftruncateSync(fd2, 20 * 1024 * 1024);
    closeSync(fd2);
    assert.match((await readImageAsDataUrl(limit))!, /^data:image\/png;base64,AAAA/);
  });
});
