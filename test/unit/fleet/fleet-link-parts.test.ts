import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseCommand } from '../../../electron/fleet/commands.ts';
import { openEventQueue, QUEUE_FILE } from '../../../electron/fleet/event-queue.ts';
import { clientOptions, defaultKioskId, topicsFor } from '../../../electron/fleet/mqtt-link.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { mqttSchema } from '../../../electron/kiosk/fleet-config.ts';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ak-queue-'));
  dirs.push(d);
  return d;
};
const configProblem = (mqtt: unknown) => {
  try {
    resolveConfig({ mqtt }, {}, { readText: () => 'p' });
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('fleet link parts', () => {
  it('broker settings: mqtts required off this computer, no credentials in the URL, password needs a user', () => {
    assert.equal(
      configProblem({ url: 'mqtt://broker.example.com:1883' }),
      'Invalid configuration at "mqtt.url": must start with mqtts:// (got mqtt://broker.example.com:1883): the password and the kiosk\'s events would cross the network unencrypted; plain mqtt:// is only for a broker on this computer.',
    );
    assert.equal(configProblem({ url: 'mqtt://127.0.0.1:1883' }), 'accepted');
    assert.equal(configProblem({ url: 'mqtts://broker.example.com:8883', username: 'k1', password: 'p' }), 'accepted');
    assert.match(configProblem({ url: 'mqtts://k1:secret@broker.example.com' }), /must not hold a user name or password/);
    assert.match(configProblem({ url: 'http://broker.example.com' }), /must start with mqtts:\/\/ \(got http:\/\/\)/);
    assert.match(configProblem({ url: 'mqtts://b.example', password: 'p' }), /"mqtt\.username".*mqtt\.password needs mqtt\.username/);
    assert.match(configProblem({ url: 'mqtts://b.example', certFile: '/c.pem' }), /"mqtt\.keyFile".*go together/);
    assert.match(configProblem({ url: 'mqtts://b.example', kioskId: 'a/b' }), /"mqtt\.kioskId"/);
    assert.match(configProblem({ url: 'mqtts://b.example', topicPrefix: 'ak/#' }), /"mqtt\.topicPrefix"/);
  });

  it('client options: last will on the status topic, certificates read from files, a missing file said plainly', () => {
    const settings = mqttSchema.parse({ url: 'mqtts://b.example', username: 'k1', password: 'pw', certFile: '/c.pem', keyFile: '/k.pem' });
    const files: Record<string, string> = { '/c.pem': 'CERT', '/k.pem': 'KEY' };
    const opts = clientOptions(settings, 'lobby-1', topicsFor('ak', 'lobby-1').status, (p) => Buffer.from(files[p]!), 5000);
    assert.deepEqual([opts.clientId, opts.username, opts.password, String(opts.cert), String(opts.key), opts.ca], ['lobby-1', 'k1', 'pw', 'CERT', 'KEY', undefined]);
    assert.deepEqual({ ...opts.will, payload: String(opts.will!.payload) }, { topic: 'ak/lobby-1/status', payload: '{"online":false,"kioskId":"lobby-1","reason":"connection lost"}', qos: 1, retain: true });
    assert.throws(
      () => clientOptions(settings, 'lobby-1', 't', () => { throw Object.assign(new Error('x'), { code: 'ENOENT' }); }, 5000),
      { message: 'The MQTT cert file /c.pem could not be read (ENOENT).' },
    );
    // A persistent session under a fixed id, and the largest packet the kiosk takes.
    assert.deepEqual([opts.clean, opts.properties], [false, { sessionExpiryInterval: 86_400, maximumPacketSize: 256 * 1024 }]);
    assert.equal(defaultKioskId('Lobby PC #3.local'), 'Lobby-PC-3.local');
    assert.equal(defaultKioskId('__fleet'), 'fleet', 'levels starting with "_" are the fleet\'s');
    assert.deepEqual(topicsFor('ak/site-1', 'k'), {
      status: 'ak/site-1/k/status',
      events: 'ak/site-1/k/events',
      cmd: 'ak/site-1/k/cmd',
      result: 'ak/site-1/k/cmd/result',
      fleetCmd: 'ak/site-1/_fleet/cmd',
      groupCmd: null,
    });
    assert.equal(topicsFor('ak', 'k', 'lobby').groupCmd, 'ak/_group/lobby/cmd');
    assert.match(mqttSchema.safeParse({ url: 'mqtts://b.example', kioskId: '_fleet' }).error!.issues[0]!.message, /must not start with "_"/);
    assert.match(mqttSchema.safeParse({ url: 'mqtts://b.example', group: '_all' }).error!.issues[0]!.message, /must not start with "_"/);
  });

  it('event queue: in order, kept across a restart until acknowledged, a torn line skipped, the oldest dropped beyond the limit', () => {
    const dir = tempDir();
    let q = openEventQueue({ dir, limit: 3 });
    const a = q.push({ n: 1 }, 0);
    q.push({ n: 2 }, 0);
    q.ack(a.seq);
    appendFileSync(join(dir, QUEUE_FILE), '{"seq":9,"id":"torn'); // a crash mid-write
    q = openEventQueue({ dir, limit: 3 });
    assert.equal(q.size, 1);
    assert.deepEqual(q.peek()!.record, { n: 2 });
    assert.equal(q.peek()!.id.split('-')[0], a.id.split('-')[0], 'the same epoch');
    q.push({ n: 3 }, 0);
    q.push({ n: 4 }, 0);
    q.push({ n: 5 }, 0);
    assert.equal(q.dropped, 1);
    assert.deepEqual([q.peek()!.record, q.size], [{ n: 3 }, 3]);
    q = openEventQueue({ dir, limit: 3 });
    const seen: unknown[] = [];
    for (let e = q.peek(); e; e = q.peek()) {
      seen.push(e.record);
      q.ack(e.seq);
    }
    assert.deepEqual(seen, [{ n: 3 }, { n: 4 }, { n: 5 }]);
    assert.equal(readFileSync(join(dir, QUEUE_FILE), 'utf8'), '', 'emptied once all are acknowledged');
    assert.equal(q.push({ n: 6 }, 0).seq, 6, 'numbers go on after a compaction');
  });

  it('commands: each kind parsed; the reasons for a refusal are words', () => {
    assert.deepEqual(parseCommand('{"id":"a","cmd":"ping"}'), { ok: true, command: { id: 'a', cmd: 'ping' } });
    assert.deepEqual(parseCommand('[1]'), { ok: false, id: null, cmd: null, message: 'The command must be a JSON object such as {"id":"1","cmd":"ping"}.' });
    assert.deepEqual(parseCommand('{"cmd":"ping"}'), { ok: false, id: null, cmd: 'ping', message: 'Invalid command at "id": Invalid input: expected string, received undefined.' });
    assert.deepEqual(parseCommand('{"id":"b","cmd":"reload","force":"yes"}'), { ok: false, id: 'b', cmd: 'reload', message: 'Invalid command at "force": Invalid input: expected boolean, received string.' });
    assert.equal((parseCommand('{"id":"c","cmd":"apply","settings":{"rtcEngine":"agora-native"}}') as { message: string }).message, '"apply" cannot change "rtcEngine"; it may change only avatar.name, avatar.persona, cast, schedule, idle.promptSeconds, idle.hangupSeconds.');
    assert.equal((parseCommand('{"id":"d","cmd":"apply","settings":{"mqtt":{"url":"mqtts://evil"}}}') as { message: string }).message.startsWith('"apply" cannot change "mqtt"'), true);
  });
});
