/**
 * What the kiosk asks of each operating system, decided without Electron (kiosk/os-integration.ts), and
 * start-up that must not stall or stop an unattended kiosk: the bounded keyring read
 * (kiosk/stored-key.ts), the retried first load (kiosk/first-load.ts) and start-up problems for staff
 * (kiosk/attention.ts). Main's use of each is checked against the fake `electron` in
 * ipc-main-wiring.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import type { Logger } from '../../../electron/core/log.ts';
import { castAttention, startupAttention } from '../../../electron/kiosk/attention.ts';
import { createFirstLoad, FIRST_LOAD_RETRY_DELAYS_MS } from '../../../electron/kiosk/first-load.ts';
import { appImagePath, applicationMenu, chromiumFeatures, devToolsAllowed, isDevToolsToggle, relaunchOptions, sandboxProblem, trayIcon, unpackagedWindowDefault } from '../../../electron/kiosk/os-integration.ts';
import { KEYRING_TIMEOUT_MS, readStoredKey, storedKeyWeak, type AsyncKeyStore } from '../../../electron/kiosk/stored-key.ts';

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('relaunch', () => {
  it('inside an AppImage: relaunches the image file (APPIMAGE) with the arguments after the mounted binary', () => {
    assert.deepEqual(relaunchOptions({ APPIMAGE: '/opt/Avatar-Kiosk.AppImage' }, ['/tmp/.mount_AvatarX/avatar-kiosk', '--kiosk-flag']), {
      execPath: '/opt/Avatar-Kiosk.AppImage',
      args: ['--kiosk-flag'],
    });
  });

  it('anywhere else (no or empty APPIMAGE): no options, Electron re-runs its own executable', () => {
    assert.equal(relaunchOptions({}, ['/opt/Avatar Kiosk/avatar-kiosk']), undefined);
    assert.equal(relaunchOptions({ APPIMAGE: '  ' }, ['/opt/Avatar Kiosk/avatar-kiosk']), undefined);
  });
});

describe('the AppImage this app runs from', () => {
  it('APPIMAGE trimmed; unset, empty or blank is none', () => {
    assert.equal(appImagePath({ APPIMAGE: ' /opt/Avatar-Kiosk.AppImage\n' }), '/opt/Avatar-Kiosk.AppImage');
    assert.equal(appImagePath({}), null);
    assert.equal(appImagePath({ APPIMAGE: '' }), null);
    assert.equal(appImagePath({ APPIMAGE: ' ' }), null);
  });
});

describe('Chromium\'s sandbox, said to staff when it is off', () => {
  const AFTER = "Install the deb (it sets the sandbox up), or allow user namespaces for the AppImage with an AppArmor profile (see the packaging guide), and restart.";
  it('on (no switch, no --no-sandbox argument): nothing to say', () => {
    assert.equal(sandboxProblem({ noSandboxSwitch: false, argv: ['/opt/kiosk', '--kiosk-flag'], env: { APPIMAGE: '/a.AppImage' } }), null);
  });
  it('off through the switch or the argument; the AppImage launcher named as the cause when it is one', () => {
    assert.equal(
      sandboxProblem({ noSandboxSwitch: true, argv: [], env: { APPIMAGE: '/a.AppImage' } }),
      `Chromium's security sandbox is OFF: a flaw in the page's engine would reach this computer. The AppImage's launcher started the kiosk with --no-sandbox because this system refuses unprivileged user namespaces. ${AFTER}`,
    );
    assert.equal(
      sandboxProblem({ noSandboxSwitch: false, argv: ['/opt/kiosk', '--no-sandbox'], env: {} }),
      `Chromium's security sandbox is OFF: a flaw in the page's engine would reach this computer. The kiosk was started with --no-sandbox. ${AFTER}`,
    );
  });
});

describe('the window mode from a source checkout', () => {
  it('packaged: the file as it is (kiosk by default)', () => {
    const raw = { callMode: 'audio' };
    assert.equal(unpackagedWindowDefault(raw, true), raw);
  });
  it('unpackaged, no mode in the file: windowed, the rest of the window block and the file kept', () => {
    assert.deepEqual(unpackagedWindowDefault({ callMode: 'audio' }, false), { callMode: 'audio', window: { mode: 'windowed' } });
    assert.deepEqual(unpackagedWindowDefault({ window: { width: 800 } }, false), { window: { width: 800, mode: 'windowed' } });
  });
  it('unpackaged, a mode in the file: the file wins', () => {
    const raw = { window: { mode: 'kiosk' } };
    assert.equal(unpackagedWindowDefault(raw, false), raw);
  });
  it('a window block that is no object is left for the schema to report', () => {
    for (const window of ['kiosk', null, ['kiosk'], 3]) {
      const raw = { window };
      assert.equal(unpackagedWindowDefault(raw, false), raw, JSON.stringify(window));
    }
  });
});

describe('Chromium features', () => {
  it('Linux turns on the global-shortcut portal (Wayland); other systems nothing', () => {
    assert.deepEqual(chromiumFeatures('linux'), ['GlobalShortcutsPortal']);
    assert.deepEqual(chromiumFeatures('darwin'), []);
    assert.deepEqual(chromiumFeatures('win32'), []);
  });
});

describe('DevTools', () => {
  it('are allowed only from a checkout with KIOSK_DEVTOOLS=1, never when packaged', () => {
    assert.equal(devToolsAllowed({ isPackaged: false, env: { KIOSK_DEVTOOLS: '1' } }), true);
    assert.equal(devToolsAllowed({ isPackaged: false, env: {} }), false);
    assert.equal(devToolsAllowed({ isPackaged: false, env: { KIOSK_DEVTOOLS: 'true' } }), false);
    assert.equal(devToolsAllowed({ isPackaged: true, env: { KIOSK_DEVTOOLS: '1' } }), false);
  });

  it('toggle on F12 pressed, not on its release, a repeat or another key', () => {
    assert.equal(isDevToolsToggle({ type: 'keyDown', key: 'F12' }), true);
    assert.equal(isDevToolsToggle({ type: 'keyUp', key: 'F12' }), false);
    assert.equal(isDevToolsToggle({ type: 'keyDown', key: 'F12', isAutoRepeat: true }), false);
    assert.equal(isDevToolsToggle({ type: 'keyDown', key: 'F11' }), false);
  });
});

describe('tray icon and application menu', () => {
  it('macOS gets the template image as it is; Windows and Linux the app icon at 32 px', () => {
    assert.deepEqual(trayIcon('darwin'), { file: 'trayTemplate.png', template: true, sizePx: null });
    assert.deepEqual(trayIcon('win32'), { file: 'icon.png', template: false, sizePx: 32 });
    assert.deepEqual(trayIcon('linux'), { file: 'icon.png', template: false, sizePx: 32 });
  });

  it('macOS gets the Edit roles (clipboard keys in the staff fields) and nothing that quits or hides; others no menu', () => {
    const menu = applicationMenu('darwin', 'Avatar Kiosk');
    assert.deepEqual(
      menu?.map((m) => [m.label, m.submenu?.map((i) => i.role ?? i.type)]),
      [
        ['Avatar Kiosk', ['about']],
        ['Edit', ['undo', 'redo', 'separator', 'cut', 'copy', 'paste', 'selectAll']],
      ],
    );
    assert.equal(applicationMenu('win32', 'Avatar Kiosk'), null);
    assert.equal(applicationMenu('linux', 'Avatar Kiosk'), null);
  });
});

/** A key store whose answers the test controls. */
function keyStore(behaviour: { available?: boolean | 'hang'; decrypt?: 'ok' | 'hang' | 'throw' | 'rotate' }): AsyncKeyStore & { encrypted: string[] } {
  const encrypted: string[] = [];
  const hang = new Promise<never>(() => {});
  return {
    encrypted,
    isAsyncEncryptionAvailable: () => (behaviour.available === 'hang' ? hang : Promise.resolve(behaviour.available ?? true)),
    decryptStringAsync: (b) => {
      if (behaviour.decrypt === 'hang') return hang;
      if (behaviour.decrypt === 'throw') return Promise.reject(new Error('bad ciphertext'));
      return Promise.resolve({ result: b.toString(), shouldReEncrypt: behaviour.decrypt === 'rotate' });
    },
    encryptStringAsync: (s) => {
      encrypted.push(s);
      return Promise.resolve(Buffer.from(`new:${s}`));
    },
  };
}
const CIPHER = Buffer.from('sk-0123456789').toString('base64');

describe('reading the stored key at start-up', () => {
  it('answers the key and leaves no timer behind', async () => {
    const clock = new FakeClock();
    const r = await readStoredKey({ cipherBase64: CIPHER, store: keyStore({}), clock });
    assert.deepEqual(r, { key: 'sk-0123456789', problem: null });
    assert.equal(clock.pendingCount, 0);
  });

  it('a decrypt that never answers: after the time limit, no key and a `timeout` problem for staff', async () => {
    const clock = new FakeClock();
    const logger = recordingLogger();
    const reading = readStoredKey({ cipherBase64: CIPHER, store: keyStore({ decrypt: 'hang' }), clock, logger });
    assert.deepEqual(clock.pendingDelays(), [KEYRING_TIMEOUT_MS]);
    await clock.advance(KEYRING_TIMEOUT_MS);
    const r = await reading;
    assert.equal(r.key, null);
    assert.equal(r.problem?.code, 'timeout');
    assert.match(r.problem!.message, /^The keyring did not answer within 5 s .* Unlock the keyring at login \(or set AVATAR_API_KEY\) and restart\.$/);
    assert.deepEqual(logger.lines, [`error ${r.problem!.message}`]);
    assert.equal(clock.pendingCount, 0);
  });

  it('an availability check that never answers is bounded the same way (injected limit)', async () => {
    const clock = new FakeClock();
    const reading = readStoredKey({ cipherBase64: CIPHER, store: keyStore({ available: 'hang' }), clock, timeoutMs: 2_000 });
    assert.deepEqual(clock.pendingDelays(), [2_000]);
    await clock.advance(2_000);
    assert.equal((await reading).problem?.code, 'timeout');
  });

  it('no secure storage, or a ciphertext that does not decrypt: no key, and a problem saying what to do', async () => {
    const unavailable = await readStoredKey({ cipherBase64: CIPHER, store: keyStore({ available: false }), clock: new FakeClock() });
    assert.deepEqual([unavailable.key, unavailable.problem?.code], [null, 'invalid_config']);
    assert.match(unavailable.problem!.message, /secure storage is not available .* Set AVATAR_API_KEY instead\.$/);
    const broken = await readStoredKey({ cipherBase64: CIPHER, store: keyStore({ decrypt: 'throw' }), clock: new FakeClock() });
    assert.deepEqual([broken.key, broken.problem?.code], [null, 'invalid_config']);
    assert.match(broken.problem!.message, /could not be decrypted; .* Enter the key again in the staff panel\.$/);
  });

  it('a rotated keyring key: the key is re-encrypted and saved', async () => {
    const store = keyStore({ decrypt: 'rotate' });
    const saved: string[] = [];
    const r = await readStoredKey({ cipherBase64: CIPHER, store, clock: new FakeClock(), saveCipher: (c) => saved.push(c) });
    await Promise.resolve();
    assert.equal(r.key, 'sk-0123456789');
    assert.deepEqual(store.encrypted, ['sk-0123456789']);
    assert.deepEqual(saved, [Buffer.from('new:sk-0123456789').toString('base64')]);
  });
});

describe('how well a stored key is protected', () => {
  it('macOS and Windows: the OS keystore; Linux: unknown, unless the hard-coded key is forced', () => {
    assert.equal(storedKeyWeak({ platform: 'darwin', passwordStore: '' }), false);
    assert.equal(storedKeyWeak({ platform: 'win32', passwordStore: '' }), false);
    assert.equal(storedKeyWeak({ platform: 'linux', passwordStore: '' }), 'unknown');
    assert.equal(storedKeyWeak({ platform: 'linux', passwordStore: 'gnome-libsecret' }), 'unknown');
    assert.equal(storedKeyWeak({ platform: 'linux', passwordStore: 'basic' }), true);
  });
});

describe('the first load of the page', () => {
  it('a crash during the first two tries: retried after 500 ms and 1 s, then done', async () => {
    const clock = new FakeClock();
    const logger = recordingLogger();
    let tries = 0;
    const load = createFirstLoad({
      clock,
      logger,
      load: () => {
        tries++;
        return tries <= 2 ? new Promise<void>(() => {}) : Promise.resolve();
      },
    });
    const running = load.run();
    await Promise.resolve();
    load.onRendererGone('crashed');
    await clock.advance(0);
    assert.deepEqual(clock.pendingDelays(), [FIRST_LOAD_RETRY_DELAYS_MS[0]]);
    await clock.advance(500);
    load.onRendererGone('crashed');
    await clock.advance(0);
    assert.deepEqual(clock.pendingDelays(), [1_000]);
    await clock.advance(1_000);
    await running;
    assert.equal(tries, 3);
    assert.equal(load.done, true);
    assert.equal(clock.pendingCount, 0);
    assert.deepEqual(
      logger.lines.filter((l) => !l.startsWith('debug')),
      ['error The kiosk page failed to load; trying again', 'error The kiosk page failed to load; trying again', 'info The kiosk page loaded after retrying'],
    );
  });

  it('every try failing: rejects after the last retry, having waited the whole table', async () => {
    const clock = new FakeClock();
    let tries = 0;
    const load = createFirstLoad({ clock, retryDelaysMs: [10, 20], load: () => (tries++, Promise.reject(new Error('ERR_FAILED'))) });
    const running = load.run().then(
      () => null,
      (e: unknown) => e,
    );
    await clock.advance(30);
    const error = (await running) as { code: string; message: string };
    assert.equal(error.code, 'internal');
    assert.equal(error.message, 'The kiosk page did not load after 3 tries: ERR_FAILED');
    assert.equal(tries, 3);
    assert.equal(load.done, false);
  });

  it('a crash report after the first load is not its business (the lifecycle reloads)', async () => {
    const load = createFirstLoad({ clock: new FakeClock(), load: () => Promise.resolve() });
    await load.run();
    load.onRendererGone('crashed');
    assert.equal(load.done, true);
  });
});

describe('the first load of the page: what it logs', () => {
  it('each failed try with its reason, the pause and its place; the success after retrying with their number; a first-try success says nothing', async () => {
    const clock = new FakeClock();
    const lines: unknown[] = [];
    const logger: Logger = { debug() {}, info: (m, d) => void lines.push(['info', m, d]), warn() {}, error: (m, d) => void lines.push(['error', m, d]) };
    let tries = 0;
    const load = createFirstLoad({ clock, logger, retryDelaysMs: [10, 20, 30], load: () => (++tries === 1 ? Promise.reject(new Error('ERR_FAILED')) : tries === 2 ? Promise.reject('net::ERR_ABORTED') : Promise.resolve()) });
    const running = load.run();
    await clock.advance(30);
    await running;
    assert.deepEqual(lines, [
      ['error', 'The kiosk page failed to load; trying again', { error: 'ERR_FAILED', retryInMs: 10, retry: 1, of: 3 }],
      ['error', 'The kiosk page failed to load; trying again', { error: 'net::ERR_ABORTED', retryInMs: 20, retry: 2, of: 3 }],
      ['info', 'The kiosk page loaded after retrying', { retries: 2 }],
    ]);
    const quiet: unknown[] = [];
    const first = createFirstLoad({ clock, logger: { debug() {}, info: (m) => void quiet.push(m), warn() {}, error: (m) => void quiet.push(m) }, load: () => Promise.resolve() });
    assert.equal(first.done, false);
    await first.run();
    assert.deepEqual(quiet, []);
  });

  it('the last failure is named as it was, an error or not; the default table retries five times over 15.5 s', async () => {
    const clock = new FakeClock();
    let tries = 0;
    const load = createFirstLoad({ clock, load: () => (tries++, Promise.reject('gone')) });
    const running = load.run().then(() => null, (e: unknown) => e);
    await clock.advance(15_499);
    assert.equal(tries, 5);
    await clock.advance(1);
    const error = (await running) as { message: string; cause: unknown };
    assert.equal(tries, 6);
    assert.equal(error.message, 'The kiosk page did not load after 6 tries: gone');
    assert.equal(error.cause, 'gone');
    assert.deepEqual(FIRST_LOAD_RETRY_DELAYS_MS, [500, 1_000, 2_000, 4_000, 8_000]);
  });

  it('a renderer gone between tries is no try\'s business', async () => {
    const clock = new FakeClock();
    let tries = 0;
    const load = createFirstLoad({ clock, retryDelaysMs: [100], load: () => (++tries === 1 ? Promise.reject(new Error('x')) : Promise.resolve()) });
    const running = load.run();
    await clock.advance(50);
    load.onRendererGone('crashed');
    await clock.advance(50);
    await running;
    assert.equal(load.done, true);
    assert.equal(tries, 2);
  });
});

describe('start-up problems for staff', () => {
  it('config, each policy problem, then the key; each says what still works and what to do', () => {
    const items = startupAttention({
      configError: { code: 'invalid_config', message: 'The configuration file is invalid: `window/width` must be integer.' },
      configPath: '/home/kiosk/.config/Avatar Kiosk/config.json',
      policyProblems: ['Policy setting "companion.width" was ignored: too small.'],
      policyPath: '/etc/avatar-kiosk/policy.json',
      keyProblem: { code: 'timeout', message: 'The keyring did not answer.' },
    });
    assert.deepEqual(items, [
      {
        kind: 'config',
        code: 'invalid_config',
        message:
          'The configuration file is invalid: `window/width` must be integer. The kiosk is running on safe defaults; fix /home/kiosk/.config/Avatar Kiosk/config.json and restart.',
      },
      {
        kind: 'policy',
        code: 'invalid_config',
        message: 'Policy setting "companion.width" was ignored: too small. The other blocks of /etc/avatar-kiosk/policy.json apply; ask the administrator to fix the policy file.',
      },
      { kind: 'key', code: 'timeout', message: 'The keyring did not answer.' },
    ]);
  });

  it('a clean start has none; a bad cast member says the others are available', () => {
    assert.deepEqual(startupAttention({ configError: null, configPath: null, policyProblems: [], policyPath: '/etc/p.json', keyProblem: null }), []);
    assert.deepEqual(castAttention([{ code: 'invalid_config', message: 'Avatar "Bo": the image is missing.' }]), [
      { kind: 'cast', code: 'invalid_config', message: 'Avatar "Bo": the image is missing. The other avatars are available; fix the configuration and restart.' },
    ]);
  });

  it('settings dropped one by one: each says where to fix it (the file, or the variable) and that the rest applies', () => {
    const items = startupAttention({
      configError: null,
      configProblems: [
        { line: 'window.width was ignored', message: 'Must be a whole number.', source: 'config.json' },
        { line: 'service.baseUrl was ignored', message: 'Must start with https://.', source: 'AVATAR_BASE_URL' },
      ],
      configPath: '/home/kiosk/config.json',
      policyProblems: [],
      policyPath: '/etc/p.json',
      keyProblem: null,
    });
    assert.deepEqual(items, [
      { kind: 'config', code: 'invalid_config', message: 'window.width was ignored. Must be a whole number. Every other setting applies; fix /home/kiosk/config.json and restart.' },
      { kind: 'config', code: 'invalid_config', message: 'service.baseUrl was ignored. Must start with https://. Every other setting applies; fix the environment variable AVATAR_BASE_URL and restart.' },
    ]);
  });

  it('where the config file is not known, staff are told where it lives', () => {
    const items = startupAttention({
      configError: { code: 'invalid_config', message: 'Not JSON.' },
      configProblems: [{ line: 'callMode was ignored', message: 'Unknown mode.', source: 'config.json' }],
      unknownConfigKeys: ['hdr'],
      configPath: null,
      policyProblems: [],
      policyPath: '/etc/p.json',
      keyProblem: null,
    });
    assert.deepEqual(items.map((i) => i.message), [
      "Not JSON. The kiosk is running on safe defaults; fix config.json in the app's data folder and restart.",
      "callMode was ignored. Unknown mode. Every other setting applies; fix config.json in the app's data folder and restart.",
      'config.json has settings this version does not know: hdr (written by a newer version, or misspelt). They are ignored and kept in the file; every other setting applies.',
    ]);
  });

  it('unknown settings: the first ten named, the rest counted', () => {
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const [ten] = startupAttention({ configError: null, unknownConfigKeys: keys.slice(0, 10), configPath: '/c.json', policyProblems: [], policyPath: '/p.json', keyProblem: null });
    assert.deepEqual(ten, {
      kind: 'config',
      code: 'invalid_config',
      message: '/c.json has settings this version does not know: k0, k1, k2, k3, k4, k5, k6, k7, k8, k9 (written by a newer version, or misspelt). They are ignored and kept in the file; every other setting applies.',
    });
    const [twelve] = startupAttention({ configError: null, unknownConfigKeys: keys, configPath: '/c.json', policyProblems: [], policyPath: '/p.json', keyProblem: null });
    assert.equal(twelve!.message, '/c.json has settings this version does not know: k0, k1, k2, k3, k4, k5, k6, k7, k8, k9 and 2 more (written by a newer version, or misspelt). They are ignored and kept in the file; every other setting applies.');
    assert.deepEqual(startupAttention({ configError: null, unknownConfigKeys: [], configPath: '/c.json', policyProblems: [], policyPath: '/p.json', keyProblem: null }), []);
  });

  it('the sandbox off is its own item, last', () => {
    const items = startupAttention({ configError: null, configPath: null, policyProblems: [], policyPath: '/p.json', keyProblem: { code: 'timeout', message: 'Keyring.' }, sandboxProblem: 'Sandbox OFF.' });
    assert.deepEqual(items, [
      { kind: 'key', code: 'timeout', message: 'Keyring.' },
      { kind: 'sandbox', code: 'invalid_config', message: 'Sandbox OFF.' },
    ]);
    assert.deepEqual(startupAttention({ configError: null, configPath: null, policyProblems: [], policyPath: '/p.json', keyProblem: null, sandboxProblem: null }), []);
  });
});

describe('reading the stored key: what is logged and what a late or blank answer does', () => {
  it('a blank key is no key', async () => {
    const r = await readStoredKey({ cipherBase64: Buffer.from('  \n').toString('base64'), store: keyStore({}), clock: new FakeClock() });
    assert.deepEqual(r, { key: null, problem: null });
    const trimmed = await readStoredKey({ cipherBase64: Buffer.from(' sk-1 \n').toString('base64'), store: keyStore({}), clock: new FakeClock() });
    assert.equal(trimmed.key, 'sk-1');
  });

  it('no secure storage and a broken ciphertext are logged as errors, the decrypt error with its reason', async () => {
    const fields: unknown[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (message, data) => void fields.push([message, data]) };
    const unavailable = await readStoredKey({ cipherBase64: CIPHER, store: keyStore({ available: false }), clock: new FakeClock(), logger });
    const broken = await readStoredKey({ cipherBase64: CIPHER, store: keyStore({ decrypt: 'throw' }), clock: new FakeClock(), logger });
    assert.deepEqual(fields, [
      [unavailable.problem!.message, undefined],
      [broken.problem!.message, { error: 'bad ciphertext' }],
    ]);
  });

  it('the time limit is said in whole seconds, and logged with its length', async () => {
    const clock = new FakeClock();
    const fields: unknown[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (_message, data) => void fields.push(data) };
    const reading = readStoredKey({ cipherBase64: CIPHER, store: keyStore({ decrypt: 'hang' }), clock, timeoutMs: 2_600, logger });
    await clock.advance(2_600);
    const r = await reading;
    assert.match(r.problem!.message, /^The keyring did not answer within 3 s \(locked, or waiting for a password\), so the kiosk started without the stored API key, in demo mode\./);
    assert.deepEqual(fields, [{ timeoutMs: 2_600 }]);
  });

  it('an answer after the time limit changes nothing: no key, and a rotated key is not saved', async () => {
    const clock = new FakeClock();
    let answer!: (v: { result: string; shouldReEncrypt: boolean }) => void;
    const store = keyStore({});
    store.decryptStringAsync = () => new Promise((resolve) => (answer = resolve));
    const saved: string[] = [];
    const reading = readStoredKey({ cipherBase64: CIPHER, store, clock, saveCipher: (c) => saved.push(c) });
    await clock.advance(KEYRING_TIMEOUT_MS);
    assert.equal((await reading).key, null);
    answer({ result: 'sk-late', shouldReEncrypt: true });
    await clock.advance(0);
    assert.deepEqual(store.encrypted, []);
    assert.deepEqual(saved, []);
  });

  it('a rotated key with nowhere to save it is not re-encrypted; a re-encryption that fails is a warning, and the key still works', async () => {
    const plain = keyStore({ decrypt: 'rotate' });
    assert.equal((await readStoredKey({ cipherBase64: CIPHER, store: plain, clock: new FakeClock() })).key, 'sk-0123456789');
    assert.deepEqual(plain.encrypted, []);
    const failing = keyStore({ decrypt: 'rotate' });
    failing.encryptStringAsync = () => Promise.reject(new Error('keyring locked'));
    const warnings: unknown[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, data) => void warnings.push([message, data]) };
    const saved: string[] = [];
    const r = await readStoredKey({ cipherBase64: CIPHER, store: failing, clock: new FakeClock(), logger, saveCipher: (c) => saved.push(c) });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(r.key, 'sk-0123456789');
    assert.deepEqual(saved, []);
    assert.deepEqual(warnings, [['The stored API key could not be re-encrypted; it still works', { error: 'keyring locked' }]]);
  });
});

describe('the first load: a renderer gone on the last try', () => {
  it('is named in the start-up failure', async () => {
    const clock = new FakeClock();
    const load = createFirstLoad({ clock, retryDelaysMs: [], load: () => new Promise<void>(() => {}) });
    const running = load.run().then(() => null, (e: unknown) => e as Error);
    await clock.advance(0);
    load.onRendererGone('oom');
    assert.equal((await running)?.message, 'The kiosk page did not load after 1 tries: the renderer process is gone (oom)');
  });
});
