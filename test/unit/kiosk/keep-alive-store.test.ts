/**
 * The kiosk's memory of which keep-alive each service accepts (kiosk/keep-alive-store.ts): one `KeepAlive`
 * per service URL, the file written when a style changes (URLs without user info or query), read back
 * after a restart, bounded, and a file that is not ours (corrupt, too big, unreadable) means the default.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KEEP_ALIVE_FILE, MAX_REMEMBERED_SERVICES, createKeepAliveStore } from '../../../electron/kiosk/keep-alive-store.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('keep-alive-store-');
const PING = { type: 3, payload: {} };

describe('the keep-alive store', () => {
  it('gives one KeepAlive per service, stores a change (no user info, query or trailing slash), and a restart starts with it', () => {
    const dir = tempDir();
    const store = createKeepAliveStore({ dir });
    const a = store.keepAliveFor('https://user:pw@svc.example/base/?x=1#f');
    assert.equal(store.keepAliveFor('https://svc.example/base'), a, 'the same service, the same KeepAlive');
    assert.equal(a.style, 'pong-message');
    assert.throws(() => readFileSync(join(dir, KEEP_ALIVE_FILE)), { code: 'ENOENT' }, 'nothing written while nothing changed');
    a.notePing(PING);
    a.refused('pong-message', 1008);
    const text = readFileSync(join(dir, KEEP_ALIVE_FILE), 'utf8');
    assert.deepEqual(JSON.parse(text), { version: 1, services: { 'https://svc.example/base': 'ping-echo' } });
    assert.equal(text.includes('pw'), false);
    if (process.platform !== 'win32') assert.equal(statSync(join(dir, KEEP_ALIVE_FILE)).mode & 0o777, 0o600);
    const restarted = createKeepAliveStore({ dir });
    assert.equal(restarted.keepAliveFor('https://svc.example/base/').style, 'ping-echo');
    assert.equal(restarted.keepAliveFor('https://other.example').style, 'pong-message');
  });

  it(`keeps the newest ${MAX_REMEMBERED_SERVICES} services`, () => {
    const dir = tempDir();
    const store = createKeepAliveStore({ dir });
    for (let i = 0; i <= MAX_REMEMBERED_SERVICES; i++) store.keepAliveFor(`https://s${i}.example`).refused('pong-message', 1008);
    const services = Object.keys(store.remembered());
    assert.equal(services.length, MAX_REMEMBERED_SERVICES);
    assert.equal(services[0], 'https://s1.example', 'the oldest went');
    assert.deepEqual((JSON.parse(readFileSync(join(dir, KEEP_ALIVE_FILE), 'utf8')) as { services: object }).services, store.remembered());
  });

  const notOurs: Array<[string, (path: string) => void, string]> = [
    ['not JSON', (p) => writeFileSync(p, '{"version":1,'), 'The keep-alive file is not valid JSON; using the default keep-alive (it is replaced on the next change)'],
    ['another version', (p) => writeFileSync(p, '{"version":2,"services":{}}'), 'The keep-alive file is not in the expected form; using the default keep-alive (it is replaced on the next change)'],
    ['an unknown style', (p) => writeFileSync(p, '{"version":1,"services":{"https://a.example":"shout"}}'), 'The keep-alive file is not in the expected form; using the default keep-alive (it is replaced on the next change)'],
    ['over 64 KB', (p) => writeFileSync(p, ' '.repeat(65 * 1024)), 'The keep-alive file could not be read; using the default keep-alive'],
    ['a folder', (p) => mkdirSync(p), 'The keep-alive file could not be read; using the default keep-alive'],
  ];
  for (const [what, make, message] of notOurs) {
    it(`a file that is ${what}: the default keep-alive, one warning`, () => {
      const dir = tempDir();
      make(join(dir, KEEP_ALIVE_FILE));
      const log = recordingLogger();
      const store = createKeepAliveStore({ dir, logger: log });
      assert.equal(store.keepAliveFor('https://a.example').style, 'pong-message');
      assert.deepEqual(log.lines.map((l) => [l.level, l.message]), [['warn', message]]);
    });
  }

  it('a change that cannot be written is logged, and the new style is used anyway', () => {
    const root = tempDir();
    writeFileSync(join(root, 'a-file'), ''); // the data folder would have to be inside a file: mkdir fails
    const log = recordingLogger();
    const store = createKeepAliveStore({ dir: join(root, 'a-file', 'data'), logger: log });
    const k = store.keepAliveFor('https://a.example');
    assert.equal(k.refused('pong-message', 4400), 'ws-pong');
    assert.equal(k.style, 'ws-pong');
    assert.deepEqual(
      log.lines.filter((l) => l.level === 'warn').map((l) => l.message),
      [
        'The keep-alive file could not be read; using the default keep-alive',
        'control socket: the service closed the socket (4400) right after our keep-alive; the next connection sends WebSocket pong frames only',
        'Could not store the keep-alive that works with this service',
      ],
    );
  });

  it('a service that changes style again becomes the newest entry: the oldest other one goes first', () => {
    const dir = tempDir();
    const store = createKeepAliveStore({ dir });
    const first = store.keepAliveFor('https://s0.example');
    first.notePing(PING);
    first.refused('pong-message', 1008);
    for (let i = 1; i < MAX_REMEMBERED_SERVICES; i++) store.keepAliveFor(`https://s${i}.example`).refused('pong-message', 1008);
    first.refused('ping-echo', 1008);
    store.keepAliveFor('https://new.example').refused('pong-message', 1008);
    const services = Object.keys(store.remembered());
    assert.equal(services.includes('https://s0.example'), true, 'changed last but one: kept');
    assert.equal(services.includes('https://s1.example'), false, 'the oldest untouched one went');
    assert.deepEqual(services.slice(-2), ['https://s0.example', 'https://new.example']);
  });

  it('a URL that does not parse is still one key per service: without its query, fragment or trailing slashes', () => {
    const dir = tempDir();
    const store = createKeepAliveStore({ dir });
    const k = store.keepAliveFor('svc.example/base//?key=secret');
    assert.equal(store.keepAliveFor('svc.example/base#part'), k);
    k.refused('pong-message', 1008);
    assert.deepEqual(store.remembered(), { 'svc.example/base': 'ws-pong' });
    assert.equal(readFileSync(join(dir, KEEP_ALIVE_FILE), 'utf8').includes('secret'), false);
  });

  it('makes the data folder when it is not there yet, private to the user, and logs what it remembered', () => {
    const dir = join(tempDir(), 'not', 'yet');
    const log = recordingLogger();
    const store = createKeepAliveStore({ dir, logger: log });
    assert.equal(log.lines.length, 0, 'a missing file is no problem');
    store.keepAliveFor('https://a.example/').refused('pong-message', 1008);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, KEEP_ALIVE_FILE), 'utf8')), { version: 1, services: { 'https://a.example': 'ws-pong' } });
    if (process.platform !== 'win32') assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(log.lines.filter((l) => l.level === 'info'), [{ level: 'info', message: 'Keep-alive remembered for this service', data: { service: 'https://a.example', style: 'ws-pong' } }]);
  });

  it('remembered() is a copy', () => {
    const store = createKeepAliveStore({ dir: tempDir() });
    store.keepAliveFor('https://a.example').refused('pong-message', 1008);
    (store.remembered() as Record<string, string>)['https://a.example'] = 'ping-echo';
    assert.equal(store.remembered()['https://a.example'], 'ws-pong');
  });

  it('a file of exactly 64 KB is still read', () => {
    const dir = tempDir();
    const json = '{"version":1,"services":{"https://a.example":"ping-echo"}}';
    writeFileSync(join(dir, KEEP_ALIVE_FILE), json + ' '.repeat(64 * 1024 - json.length));
    const log = recordingLogger();
    assert.equal(createKeepAliveStore({ dir, logger: log }).keepAliveFor('https://a.example').style, 'ping-echo');
    assert.deepEqual(log.lines, []);
  });

  it('each warning names the file, and what was wrong where', () => {
    const cases: Array<[string, (p: string) => void, Record<string, unknown>]> = [
      ['too big', (p) => writeFileSync(p, ' '.repeat(65 * 1024)), { code: 'EFBIG' }],
      ['a folder', (p) => mkdirSync(p), { code: 'EISDIR' }],
      ['not JSON', (p) => writeFileSync(p, 'nope'), {}],
      ['another version', (p) => writeFileSync(p, '{"version":2,"services":{}}'), { where: 'version' }],
      ['an unknown style', (p) => writeFileSync(p, '{"version":1,"services":{"https://a.example":"shout"}}'), { where: 'services.https://a.example' }],
      ['a list', (p) => writeFileSync(p, '[]'), { where: '(file)' }],
    ];
    for (const [what, make, fields] of cases) {
      const dir = tempDir();
      const path = join(dir, KEEP_ALIVE_FILE);
      make(path);
      const log = recordingLogger();
      createKeepAliveStore({ dir, logger: log });
      assert.deepEqual(log.lines[0]!.data, { path, ...fields }, what);
    }
  });

  it('a URL that does not parse keeps no query in the file, even one followed by a line break', () => {
    const dir = tempDir();
    const store = createKeepAliveStore({ dir });
    store.keepAliveFor('svc.example/base?key=secret\nmore').refused('pong-message', 1008);
    assert.deepEqual(Object.keys(store.remembered()), ['svc.example/base']);
    assert.equal(readFileSync(join(dir, KEEP_ALIVE_FILE), 'utf8').includes('secret'), false);
  });

  it('the file is a text file (it ends with a line break); a service keyed without its trailing slashes, however many', () => {
    const dir = tempDir();
    const store = createKeepAliveStore({ dir });
    const k = store.keepAliveFor('https://svc.example/base//');
    assert.equal(store.keepAliveFor('https://svc.example/base'), k);
    k.refused('pong-message', 1008);
    assert.deepEqual(store.remembered(), { 'https://svc.example/base': 'ws-pong' });
    assert.equal(readFileSync(join(dir, KEEP_ALIVE_FILE), 'utf8').endsWith('}\n'), true);
  });

  it('a change that cannot be written names the file and the reason', () => {
    const root = tempDir();
    writeFileSync(join(root, 'a-file'), '');
    const log = recordingLogger();
    const dir = join(root, 'a-file', 'data');
    createKeepAliveStore({ dir, logger: log }).keepAliveFor('https://a.example').refused('pong-message', 4400);
    const warning = log.lines.find((l) => l.message === 'Could not store the keep-alive that works with this service')!;
    assert.equal(warning.data!.path, join(dir, KEEP_ALIVE_FILE));
    assert.match(String(warning.data!.error), /ENOTDIR|EEXIST/);
  });
});
