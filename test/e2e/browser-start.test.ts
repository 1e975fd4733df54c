/**
 * `npm start` and `npm run start:browser` as a person runs them: the real entry files in their own
 * process, Debian's Chromium as the browser they open, a virtual display (Xvfb) where one is needed.
 *  - as root, Chromium refuses to start without its sandbox: the start path says so in one line, with
 *    what to do, instead of "could not open a window";
 *  - window.mode kiosk: the browser is full screen, and when it is closed (the test kills it, as Alt+F4
 *    or a crash would end it) the host opens it again and keeps running;
 *  - `npm start`'s fallback opens an app window (no --kiosk), says it is not a locked kiosk, and its close
 *    stops the host.
 * Electron's download is pointed at a closed local port, so the fallback is taken at once, offline.
 * Run: node --import tsx --test --test-timeout=180000 test/e2e/browser-start.test.ts
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import WebSocket from 'ws';
import { KIOSK_SOCKET_PATH } from '../../electron/core/kiosk-api.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { browserChildren, CHROMIUM, dataDir, hasXvfb, isRoot, pageConnections, runEntry, startXvfb, tempDir, type Running } from './browser-processes.ts';
import { ROOT, SCREENS_DIR } from './harness.ts';
import { until } from '../helpers/until.ts';

const WAIT_MS = 60_000;

const started: Running[] = [];
after(() => {
  for (const r of started) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});

/** The environment of every start: offline Electron download, our Chromium, a private data folder. */
const baseEnv = (data: string, extra: Record<string, string> = {}) => ({
  AVATAR_KIOSK_DATA: data,
  KIOSK_BROWSER: CHROMIUM,
  KIOSK_SKIP_BUILD: '1',
  ELECTRON_MIRROR: 'http://127.0.0.1:1/',
  ELECTRON_OVERRIDE_DIST_PATH: join(tmpdir(), 'no-electron-here'),
  // Each start's own cache: a failed download remembered by one test (or the user) must not change another's lines.
  XDG_CACHE_HOME: tempDir('kiosk-cache-'),
  ...extra,
});

describe('npm start as root (containers, WSL, fresh VMs)', { skip: !isRoot ? 'needs root: it shows what a root user sees (run the suite as root, as CI does)' : !existsSync(CHROMIUM) ? `no ${CHROMIUM}` : false }, () => {
  it('builds quietly, then says in one line that Chromium refuses root without its sandbox, and what to do; nothing else', async () => {
    const data = await dataDir({});
    // The real `npm start` path, its build included (the build's own output must not show).
    const env: Record<string, string> = baseEnv(data);
    delete env.KIOSK_SKIP_BUILD;
    const run = runEntry('electron/browser/start.ts', env);
    started.push(run);
    await until(() => /\/launch\?code=\S+\n/.test(run.out()) || run.child.exitCode !== null, { realTimeoutMs: 240_000, message: 'the address' });
    const lines = run.out().trimEnd().split('\n');
    const port = /127\.0\.0\.1:(\d+)/.exec(run.out())?.[1];
    const expected = [
      /^Building the app \(about a minute the first time\)…$/,
      /^Electron's binary could not be downloaded \(.{1,80}\): using the browser mode\. npm start won't try again; to retry: npm run install:electron \(offline: docs\/browser-mode\.md\)\.$/,
      // The origin alone answers 403 (only the launch address opens the kiosk), so it is not printed.
      /^Avatar Kiosk is running \(demo mode: the built-in emulator, no key needed\)\.$/,
      /^Opening \/usr\/bin\/chromium in an app window\. This is NOT a locked kiosk \(for one, see docs\/browser-mode\.md\)\.$/,
      new RegExp(`^Stop with Ctrl\\+C\\. Log: ${data}/logs/main\\.log$`),
      /^Chromium refuses to run as root without its sandbox, so no window opened\. Run npm start as a normal user; only on a disposable machine \(a container, a test VM\) may you set KIOSK_BROWSER_NO_SANDBOX=1 to run it without the sandbox \(docs\/browser-mode\.md\)\.$/,
      /^Open this address in Chromium or Chrome on this computer \(it works once, within 60 seconds; keep it private\):$/,
      new RegExp(`^  http://127\\.0\\.0\\.1:${port}/launch\\?code=[A-Za-z0-9_-]{43}$`),
    ];
    assert.equal(lines.length, expected.length, lines.join('\n'));
    lines.forEach((line, i) => assert.match(line, expected[i]!));
    assert.doesNotMatch(run.out(), /could not open a window|\(!\)|vite|built in|EBADENGINE/i);
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });
});

describe('the browser kept on screen', { skip: !hasXvfb ? 'needs Xvfb (apt-get install -y xvfb) for a real Chromium window' : !existsSync(CHROMIUM) ? `no ${CHROMIUM}` : false }, () => {
  // Root here needs the documented opt-in; a normal user runs Chromium with its sandbox.
  const sandboxEnv: Record<string, string> = isRoot ? { KIOSK_BROWSER_NO_SANDBOX: '1' } : {};

  it('window.mode kiosk: the browser is full screen, and opened again when it is closed; the host keeps running', async () => {
    const x = await startXvfb();
    try {
      const data = await dataDir({ window: { mode: 'kiosk' } });
      const run = runEntry('electron/browser/index.ts', baseEnv(data, { DISPLAY: x.display, ...sandboxEnv }));
      started.push(run);
      await until(() => pageConnections(data) === 1, { realTimeoutMs: WAIT_MS, message: 'the page connected' });
      const [first] = browserChildren(run.child.pid!);
      assert.ok(first, 'a browser process');
      assert.ok(first.args.includes('--kiosk'), first.args.join(' '));

      process.kill(first.pid, 'SIGTERM'); // the window is closed
      await until(() => pageConnections(data) === 2, { realTimeoutMs: WAIT_MS, message: 'the page connected again' });
      const [second] = browserChildren(run.child.pid!);
      assert.ok(second && second.pid !== first.pid, 'a new browser');
      assert.ok(second.args.includes('--kiosk'));
      assert.equal(run.child.exitCode, null, 'the host still runs');
      assert.match(run.out(), /The kiosk's browser closed: opening it again/);

      // Twice more, quickly: still opened again (with a growing pause), never an exit.
      process.kill(second.pid, 'SIGKILL');
      await until(() => pageConnections(data) === 3, { realTimeoutMs: WAIT_MS, message: 'a third time' });
      assert.equal(run.child.exitCode, null);

      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
      await until(() => browserChildren(run.child.pid!).length === 0, { realTimeoutMs: 10_000, message: 'the browser closed with the host' });
    } finally {
      x.stop();
    }
  });

  it('npm start\'s app window fits a 1280×800 screen: the configured 1080×1920 scaled to 450×800, Tap to talk on screen', async () => {
    const x = await startXvfb(); // 1280×800, no window manager
    try {
      const data = await dataDir({ window: { mode: 'windowed', width: 1080, height: 1920 } });
      const run = runEntry('electron/browser/start.ts', baseEnv(data, { DISPLAY: x.display, ...sandboxEnv }));
      started.push(run);
      await until(() => pageConnections(data) === 1, { realTimeoutMs: WAIT_MS, message: 'the page connected' });
      const [browser] = browserChildren(run.child.pid!);
      assert.ok(browser?.args.includes('--window-size=1080,1920'), 'opened at the configured size');
      // The window as the X server has it, once its page has fitted it (the resize lands after the start page ran).
      const xdo = (args: string[]) => spawnSync('/usr/bin/xdotool', args, { env: { ...process.env, DISPLAY: x.display }, encoding: 'utf8', timeout: 5_000 }).stdout;
      const geometry = () => {
        const id = xdo(['search', '--onlyvisible', '--name', 'Ava']).split('\n').find(Boolean);
        const text = id ? xdo(['getwindowgeometry', id]) : '';
        const at = /Position: (-?\d+),(-?\d+)/.exec(text);
        const size = /Geometry: (\d+)x(\d+)/.exec(text);
        return at && size ? { x: Number(at[1]), y: Number(at[2]), width: Number(size[1]), height: Number(size[2]) } : null;
      };
      let fitted = geometry();
      for (const deadline = Date.now() + WAIT_MS; fitted?.height !== 800 && Date.now() < deadline; fitted = geometry()) await new Promise((ok) => setTimeout(ok, 200));
      assert.ok(fitted, 'the kiosk\'s window on the screen');
      assert.deepEqual([fitted.width, fitted.height], [450, 800], 'the aspect kept (1080:1920), as tall as the screen');
      assert.ok(fitted.x >= 0 && fitted.y >= 0 && fitted.x + fitted.width <= 1280 && fitted.y + fitted.height <= 800, JSON.stringify(fitted));
      // The screen as a person sees it (looked at: the attract screen with Tap to talk, whole, in the window).
      // Tap to talk is the one large gold shape: once the attract screen is drawn, about 8 % of the window's
      // lower half is its colour (a loading spinner's thin arc is well under 1 %).
      mkdirSync(SCREENS_DIR, { recursive: true });
      const shot = join(SCREENS_DIR, 'browser-mode-app-window-1280x800.png');
      const goldShare = () => {
        spawnSync('/usr/bin/import', ['-window', 'root', shot], { env: { ...process.env, DISPLAY: x.display }, timeout: 10_000 });
        const crop = `${fitted.width}x${fitted.height / 2}+${fitted.x}+${fitted.y + fitted.height / 2}`;
        const args = [shot, '-crop', crop, '+repage', '-fuzz', '10%', '-fill', 'black', '+opaque', 'srgb(227,186,130)', '-fill', 'white', '-opaque', 'srgb(227,186,130)', '-format', '%[fx:mean]', 'info:'];
        return Number(spawnSync('convert', args, { encoding: 'utf8' }).stdout);
      };
      let gold = goldShare();
      for (const deadline = Date.now() + WAIT_MS; gold < 0.02 && Date.now() < deadline; gold = goldShare()) await new Promise((ok) => setTimeout(ok, 500));
      assert.ok(gold >= 0.02, `Tap to talk drawn in the window's lower half, on the screen (${(gold * 100).toFixed(1)} % of it gold)`);
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
    } finally {
      x.stop();
    }
  });

  it('npm start\'s fallback opens an app window even with window.mode kiosk, says it is not a locked kiosk, and its close stops the host', async () => {
    const x = await startXvfb();
    try {
      const data = await dataDir({ window: { mode: 'kiosk' } });
      const run = runEntry('electron/browser/start.ts', baseEnv(data, { DISPLAY: x.display, ...sandboxEnv }));
      started.push(run);
      await until(() => pageConnections(data) === 1, { realTimeoutMs: WAIT_MS, message: 'the page connected' });
      const [browser] = browserChildren(run.child.pid!);
      assert.ok(browser);
      assert.equal(browser.args.includes('--kiosk'), false);
      assert.ok(browser.args.some((a) => a.startsWith('--app=')));
      assert.match(run.out(), /This is NOT a locked kiosk/);
      process.kill(browser.pid, 'SIGTERM');
      assert.equal(await run.exited, 0);
      assert.match(run.out(), /The window was closed: the kiosk stopped\./);
    } finally {
      x.stop();
    }
  });
});

/** A file's permission bits, as `ls -l` would show them in octal. */
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('what browser mode leaves on disk', { skip: process.platform === 'win32' ? 'POSIX modes' : false }, () => {
  it('keeps the data folder 0700, config.json (PIN hash) 0600 and the log 0600, also when they were made readable by hand', async () => {
    const data = mkdtempSync(join(tmpdir(), 'kiosk-modes-'));
    chmodSync(data, 0o755);
    writeFileSync(join(data, 'config.json'), '{}\n', { mode: 0o644 }); // as an operator's editor writes it
    const run = runEntry('electron/browser/index.ts', { AVATAR_KIOSK_DATA: data, KIOSK_BROWSER: 'none' });
    started.push(run);
    await until(() => /\/launch\?code=/.test(run.out()), { realTimeoutMs: WAIT_MS, message: 'the address' });
    const launch = new URL(/(http:\/\/127\.0\.0\.1:\d+\/launch\?code=\S+)/.exec(run.out())![1]!);
    // In as the page would be, and the first PIN chosen: config.json is written with the hash.
    const cookie = await new Promise<string>((ok, fail) => {
      request({ host: launch.hostname, port: launch.port, path: launch.pathname + launch.search }, (res) => {
        res.resume();
        ok(String(res.headers['set-cookie']?.[0]).split(';')[0]!);
      })
        .on('error', fail)
        .end();
    });
    const ws = new WebSocket(`ws://${launch.host}${KIOSK_SOCKET_PATH}`, { headers: { origin: launch.origin, cookie } });
    const answers: string[] = [];
    ws.on('message', (d) => answers.push(String(d)));
    await new Promise((ok, fail) => (ws.once('open', ok), ws.once('error', fail)));
    ws.send(JSON.stringify({ type: 'call', id: 1, channel: 'kiosk:staff:set-pin', arg: { pin: '246813' } }));
    await until(() => answers.some((a) => a.includes('"id":1')), { realTimeoutMs: WAIT_MS, message: 'the PIN answer' });
    assert.match(answers.find((a) => a.includes('"id":1'))!, /"ok":true/);
    ws.close();
    assert.match(readFileSync(join(data, 'config.json'), 'utf8'), /staffPinHash/);
    assert.deepEqual(
      { data: modeOf(data), config: modeOf(join(data, 'config.json')), logs: modeOf(join(data, 'logs')), log: modeOf(join(data, 'logs', 'main.log')) },
      { data: '700', config: '600', logs: '700', log: '600' },
    );
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });
});

/** The HTTP status a launch address answers. */
function statusOf(url: URL): Promise<number> {
  return new Promise((ok, fail) => {
    request({ host: url.hostname, port: url.port, path: url.pathname + url.search }, (res) => {
      res.resume();
      ok(res.statusCode ?? 0);
    })
      .on('error', fail)
      .end();
  });
}

describe('a printed address, at a terminal', { skip: !existsSync('/usr/bin/script') ? 'needs script (util-linux) to give the host a terminal' : false }, () => {
  it('KIOSK_BROWSER=none: the address works once, within 60 seconds, and Enter prints a new one', async () => {
    const data = await dataDir({});
    // `script` gives the host a terminal for its input, as a person's shell does.
    const child = spawn('/usr/bin/script', ['-qfec', `${process.execPath} --import tsx electron/browser/index.ts`, '/dev/null'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', AVATAR_KIOSK_DATA: data, KIOSK_BROWSER: 'none' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const codes = () => [...out.matchAll(/(http:\/\/127\.0\.0\.1:\d+\/launch\?code=[A-Za-z0-9_-]{43})/g)].map((m) => new URL(m[1]!));
    try {
      await until(() => codes().length === 1, { realTimeoutMs: WAIT_MS, message: 'the address' });
      assert.match(out, /Open this address in Chromium or Chrome on this computer \(it works once, within 60 seconds; keep it private; press Enter here for a new one\):/);
      child.stdin!.write('\n');
      await until(() => codes().length === 2, { realTimeoutMs: WAIT_MS, message: 'a new address' });
      const [first, second] = codes();
      assert.notEqual(first!.href, second!.href);
      assert.deepEqual([await statusOf(first!), await statusOf(second!), await statusOf(first!)], [200, 200, 403]);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
  });
});
