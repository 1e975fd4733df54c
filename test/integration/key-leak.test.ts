/**
 * The key-leak check: a known API key goes through sessions and failures in the real main process
 * (test/electron/stub/key-leak-harness.ts: electron/main/index.ts on the electron stub, a temp user-data
 * folder, the direct surface on an emulator) and must appear
 *   - in no log line (main logs at debug level to the console, stderr and stdout, and to main.log),
 *   - in nothing sent to the renderer (every IPC answer and every event payload),
 *   - in no file under the user-data folder, whatever the file: the scan walks the whole folder, so a
 *     ledger, a log file or a session-recovery file added later is covered. The encrypted store is the one
 *     exception, and only for its ciphertext field (`encryptedApiKey` in config.json), which must decrypt
 *     to the key (it is stored) while the rest of that file is scanned like any other;
 *   - nowhere in the built `out/` (npm test builds before testing), nor in a fresh build made with the key
 *     in every environment variable a build could inline (AVATAR_API_KEY and the VITE_/MAIN_VITE_/… forms).
 * "Appear" means the key in plain text, UTF-16, hex, base64 (any alignment, standard or URL-safe), URL
 * encoding, or its first or last 16 characters (a truncated preview).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '../..');
const KEY = 'sk-leakcheck-7Q2x9LmPz4Rv8Ww3Kd6Ny1Tb5-Ug0';
const STORE_FILE = 'config.json';
const STORE_FIELD = 'encryptedApiKey';

/** Byte patterns that mean "the key is here". */
function leakPatterns(key: string): Array<{ name: string; bytes: Buffer }> {
  const forms: Array<[string, Buffer]> = [
    ['plain', Buffer.from(key)],
    ['first 16 characters', Buffer.from(key.slice(0, 16))],
    ['last 16 characters', Buffer.from(key.slice(-16))],
    ['utf-16le', Buffer.from(key, 'utf16le')],
    ['hex', Buffer.from(Buffer.from(key).toString('hex'))],
    ['HEX', Buffer.from(Buffer.from(key).toString('hex').toUpperCase())],
    ['url-encoded', Buffer.from(encodeURIComponent(key))],
  ];
  // base64 of the key at each of the three byte alignments: keep the characters that do not depend on
  // what surrounds the key.
  for (const pad of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(pad, 0x41), Buffer.from(key)]).toString('base64');
    const start = Math.ceil((pad * 4) / 3) + 1;
    const stable = encoded.slice(start, start + Math.floor(((key.length - 3) * 4) / 3) - 1);
    forms.push([`base64 (offset ${pad})`, Buffer.from(stable)]);
    forms.push([`base64url (offset ${pad})`, Buffer.from(stable.replace(/\+/g, '-').replace(/\//g, '_'))]);
  }
  return forms.map(([name, bytes]) => ({ name, bytes }));
}

const PATTERNS = leakPatterns(KEY);

function findLeaks(where: string, content: Buffer): string[] {
  return PATTERNS.filter((p) => content.includes(p.bytes)).map((p) => `${where}: the key (${p.name})`);
}

/** Every regular file under `dir`, recursively (symlinks are reported, not followed). */
function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) out.push(path);
    else if (stat.isDirectory()) out.push(...allFiles(path));
    else if (stat.isFile()) out.push(path);
  }
  return out;
}

/** Scans a folder; the store file's ciphertext field is set aside (and returned) before its scan. */
function scanFolder(dir: string): { leaks: string[]; files: string[]; ciphertext: string | null } {
  const leaks: string[] = [];
  let ciphertext: string | null = null;
  const files = allFiles(dir);
  for (const path of files) {
    const name = relative(dir, path);
    let content = readFileSync(path);
    if (name === STORE_FILE) {
      const json = JSON.parse(content.toString('utf8')) as Record<string, unknown>;
      if (typeof json[STORE_FIELD] === 'string') ciphertext = json[STORE_FIELD];
      delete json[STORE_FIELD];
      leaks.push(...findLeaks(`${name} (without ${STORE_FIELD})`, Buffer.from(JSON.stringify(json))));
      // The plain key is not in the ciphertext either.
      if (ciphertext !== null && ciphertext.includes(KEY)) leaks.push(`${name}: ${STORE_FIELD} holds the key in plain text`);
      content = Buffer.alloc(0);
    }
    leaks.push(...findLeaks(name, content));
  }
  return { leaks, files: files.map((f) => relative(dir, f)), ciphertext };
}

/** The electron stub's safeStorage (test/electron/stub/electron.ts): base64 of `enc:` + hex. */
function stubDecrypt(base64: string): string {
  return Buffer.from(Buffer.from(base64, 'base64').toString().slice(4), 'hex').toString();
}

interface HarnessRun {
  code: number | null;
  stdout: string;
  stderr: string;
  report: { scenario: string; steps: string[]; toRenderer: unknown[]; errorBoxes: unknown[]; thiefSaw: string[] };
  userData: string;
}

function runHarness(scenario: 'stored' | 'env'): Promise<HarnessRun> {
  const userData = mkdtempSync(join(tmpdir(), `kiosk-leak-${scenario}-`));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './test/electron/stub/register.mjs', 'test/electron/stub/key-leak-harness.ts', scenario],
      {
        cwd: ROOT,
        env: { ...process.env, LEAK_KEY: KEY, LEAK_USER_DATA: userData, AVATAR_API_KEY: '', KIOSK_WINDOW_MODE: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('LEAKCHECK '));
      if (!line) return reject(new Error(`the key-leak harness (${scenario}) printed no report, exit ${code}:\n${(stdout + stderr).slice(-3000)}`));
      resolve({ code, stdout, stderr, report: JSON.parse(line.slice('LEAKCHECK '.length)), userData });
    });
  });
}

describe('key-leak check', () => {
  const runs: HarnessRun[] = [];
  after(() => {
    for (const r of runs) rmSync(r.userData, { recursive: true, force: true });
  });

  it('the scanner finds the key in every form it looks for (so a clean scan means something)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-leak-self-'));
    try {
      const samples: Record<string, string | Buffer> = {
        'plain.log': `INFO header Authorization: Token ${KEY}\n`,
        'logs/nested/deep.txt': `x${Buffer.from(`xx${KEY}yy`).toString('base64')}x`,
        'b64url.json': JSON.stringify({ v: Buffer.from(`.${KEY}`).toString('base64url') }),
        'hex.bin': Buffer.from(Buffer.from(KEY).toString('hex')),
        'utf16.dat': Buffer.from(`ledger ${KEY}`, 'utf16le'),
        'preview.txt': `key=${KEY.slice(0, 20)}…`,
        [STORE_FILE]: JSON.stringify({ [STORE_FIELD]: 'ZW5jOjAw', note: `tail ${KEY.slice(-18)}` }),
      };
      for (const [name, content] of Object.entries(samples)) {
        const path = join(dir, name);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, content);
      }
      const { leaks, ciphertext } = scanFolder(dir);
      const leaked = new Set(leaks.map((l) => l.split(':')[0]!.split(' (')[0]));
      assert.deepEqual([...leaked].sort(), Object.keys(samples).sort());
      assert.equal(ciphertext, 'ZW5jOjAw');
      assert.deepEqual(scanFolder(mkdtempSync(join(tmpdir(), 'kiosk-leak-empty-'))).leaks, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the main process, through sessions and failures', () => {
    before(async () => {
      runs.push(...(await Promise.all([runHarness('stored'), runHarness('env')])));
    });

    it('ran every session and failure it was meant to', () => {
      const [stored, env] = runs;
      assert.equal(stored!.code, 0);
      assert.deepEqual(stored!.report.steps, [
        'bad key: start ok → failed (unauthorized)',
        'bad key: → failed (unauthorized)',
        'forced credit_insufficient: start ok → live',
        'forced credit_insufficient: → ended',
        'drop and reconnect: start ok → live',
        'drop and reconnect: → ended',
        'NOT_READY then audit_violation: start ok → live',
        'NOT_READY then audit_violation: → ended',
        'LIVE_CONN_INIT_FAILED: start ok → failed (init_failed)',
        'LIVE_CONN_INIT_FAILED: → failed (init_failed)',
        'low balance: start ok → failed (insufficient_credits)',
        'low balance: → failed (insufficient_credits)',
        'media error: start ok → live',
        'media error: → failed (rtc_failed)',
        'renderer crash: start ok → live',
        'moved to another origin: saved, key dropped',
        'quit while live: start ok → live',
        'quit',
      ]);
      assert.equal(env!.code, 0);
      assert.deepEqual(env!.report.steps.slice(0, 2), ['bad key: start ok → failed (unauthorized)', 'bad key: → failed (unauthorized)']);
      assert.equal(env!.report.steps.at(-1), 'quit');
      assert.ok(env!.report.steps.includes('moved to another origin: refused'), JSON.stringify(env!.report.steps));
      // The runs produced material to scan.
      for (const r of runs) {
        // Main logs to the console: stderr until the log file opens, then electron-log's console transport
        // (stdout for info/debug) and main.log under user-data, which the file scan below covers.
        assert.ok((r.stderr + r.stdout).split('\n').length > 50, 'main logged');
        assert.ok(r.report.toRenderer.length > 20, 'the renderer was sent answers and events');
      }
    });

    it('a server the service URL was moved to never receives the key', () => {
      for (const r of runs) assert.deepEqual(findLeaks(`${r.report.scenario}: the other origin`, Buffer.from(JSON.stringify(r.report.thiefSaw))), []);
    });

    it('the key is in no log line', () => {
      for (const r of runs) assert.deepEqual(findLeaks(`${r.report.scenario}: stderr (main log)`, Buffer.from(r.stderr)), []);
    });

    it('the key is in nothing sent to the renderer (IPC answers, events) and in no dialog', () => {
      for (const r of runs) {
        assert.deepEqual(findLeaks(`${r.report.scenario}: to the renderer`, Buffer.from(JSON.stringify(r.report.toRenderer))), []);
        assert.deepEqual(findLeaks(`${r.report.scenario}: dialogs`, Buffer.from(JSON.stringify(r.report.errorBoxes))), []);
        // Nothing else went to stdout either.
        assert.deepEqual(findLeaks(`${r.report.scenario}: stdout`, Buffer.from(r.stdout)), []);
      }
    });

    it('no file under the user-data folder holds the key, except the encrypted store, which holds it only encrypted', () => {
      const [stored, env] = runs;
      const s = scanFolder(stored!.userData);
      assert.deepEqual(s.leaks, [], `files: ${s.files.join(', ')}`);
      assert.ok(s.files.includes(STORE_FILE));
      assert.ok(s.ciphertext, 'the key was stored');
      assert.equal(stubDecrypt(s.ciphertext), KEY, 'the store holds the key, encrypted');
      const e = scanFolder(env!.userData);
      assert.deepEqual(e.leaks, [], `files: ${e.files.join(', ')}`);
      assert.equal(e.ciphertext, null, 'a key from the environment is never written');
    });
  });

  describe('the build', () => {
    it('the built out/ does not contain the key', () => {
      const out = join(ROOT, 'out');
      assert.ok(existsSync(join(out, 'main')) && existsSync(join(out, 'renderer', 'index.html')), 'out/ is built (npm test builds before testing; else npm run build)');
      const { leaks, files } = scanFolder(out);
      assert.ok(files.length >= 4);
      assert.deepEqual(leaks, []);
    });

    it('a build made with the key in the environment does not contain it (nothing inlines an env key)', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kiosk-leak-build-'));
      try {
        const env: NodeJS.ProcessEnv = { ...process.env };
        for (const name of ['AVATAR_API_KEY', 'VITE_AVATAR_API_KEY', 'MAIN_VITE_AVATAR_API_KEY', 'PRELOAD_VITE_AVATAR_API_KEY', 'RENDERER_VITE_AVATAR_API_KEY', 'VITE_API_KEY']) env[name] = KEY;
        const run = promisify(execFile);
        const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
        await run(bin('electron-vite'), ['build', '--outDir', dir], { cwd: ROOT, env, timeout: 120_000 });
        await run(bin('vite'), ['build', '--config', 'renderer/vite.config.ts', '--outDir', join(dir, 'renderer'), '--emptyOutDir'], { cwd: ROOT, env, timeout: 120_000 });
        const { leaks, files } = scanFolder(dir);
        assert.ok(files.some((f) => f.startsWith('main')) && files.some((f) => f.startsWith('renderer')), `built: ${files.join(', ')}`);
        assert.deepEqual(leaks, []);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

