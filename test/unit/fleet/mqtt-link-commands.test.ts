/**
 * The fleet link's command channel against a scripted broker in this process: every command's exact
 * answer on cmd/result, the guards before a command runs (retained, rate, malformed, expiry, repeated
 * id), what the kiosk is asked to do and in which order, and the log lines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AvatarError } from '../../../electron/core/errors.ts';
import { COMMAND_NAMES, FLEET_COMMANDS, MISSING_CAPABILITY } from '../../../electron/fleet/command-table.ts';
import { linkRigsClosedAfterEach, PREFIX, recordingUpdates, START_ISO, T, type LinkRig } from '../../helpers/mqtt-link-rig.ts';
import { deferred } from '../../helpers/session-world.ts';
import { realDelay, until } from '../../helpers/until.ts';

const startLinkRig = linkRigsClosedAfterEach();
const ok = (id: string, cmd: string, result: Record<string, unknown>) => ({ id, cmd, ok: true, result, at: START_ISO });
const refused = (id: string | null, cmd: string | null, code: string, message: string) => ({ id, cmd, ok: false, error: { code, message }, at: START_ISO });
const BUSY = (cmd: string) => `A visitor is in a call; "${cmd}" would interrupt it. Send it again with "force": true to end the call first.`;
/** A command whose answer shows that everything delivered before it was handled (the broker keeps the order). */
const barrier = async (rig: LinkRig) => {
  const id = `barrier-${rig.answers().length}`;
  rig.broker.deliver(T.cmd, JSON.stringify({ id, cmd: 'ping' }), { properties: { messageExpiryInterval: 60 } });
  await until(() => rig.answers().some((a) => a.id === id), { message: 'the barrier' });
};
const warnings = (rig: LinkRig) => rig.logger.lines.filter((l) => l.level === 'warn');

describe('mqtt link: commands', () => {
  it('answers a ping on its own result topic, QoS 1, not retained, and logs the command', async () => {
    const rig = await startLinkRig();
    assert.deepEqual(await rig.command({ id: 'c1', cmd: 'ping' }), ok('c1', 'ping', { pong: true, version: '1.2.3' }));
    const [answer] = rig.broker.published(T.result);
    assert.deepEqual([answer!.qos, answer!.retain], [1, false]);
    assert.deepEqual(rig.logger.lines.at(-1), { level: 'info', message: 'Fleet link: command', data: { id: 'c1', cmd: 'ping', force: false } });
    await rig.command({ id: 'c2', cmd: 'ping', force: true });
    assert.deepEqual(rig.logger.lines.at(-1)!.data, { id: 'c2', cmd: 'ping', force: true });
  });

  it("takes commands from the fleet's and its group's topics, and from no other", async () => {
    const rig = await startLinkRig({ settings: { group: 'lobby' } });
    assert.equal((await rig.command({ id: 'f1', cmd: 'ping' }, { topic: T.fleetCmd })).id, 'f1');
    assert.equal((await rig.command({ id: 'g1', cmd: 'ping' }, { topic: `${PREFIX}/_group/lobby/cmd` })).id, 'g1');
    rig.broker.deliver(`${PREFIX}/other-kiosk/cmd`, JSON.stringify({ id: 'x1', cmd: 'reload' }), { properties: { messageExpiryInterval: 60 } });
    rig.broker.deliver(`${PREFIX}/_group/hall/cmd`, JSON.stringify({ id: 'x2', cmd: 'reload' }), { properties: { messageExpiryInterval: 60 } });
    await barrier(rig);
    assert.deepEqual(rig.answers().map((a) => a.id), ['f1', 'g1', 'barrier-2']);
    assert.deepEqual(rig.control.did, []);
  });

  it('ignores an empty message (how a retained command is cleared) and refuses a retained one', async () => {
    const rig = await startLinkRig();
    rig.broker.deliver(T.cmd, '', { retain: true });
    await barrier(rig);
    assert.equal(rig.answers().length, 1);
    assert.deepEqual(
      await rig.command({ id: 'r1', cmd: 'restart' }, { retain: true }),
      refused('r1', null, 'retained', 'Retained commands are refused: the broker would deliver it again at every connect. Publish commands without the retain flag (and clear this one with an empty retained message).'),
    );
    assert.deepEqual(warnings(rig), [{ level: 'warn', message: 'Fleet link: a retained command was refused', data: { id: 'r1' } }]);
    assert.deepEqual(rig.control.did, []);
  });

  it('refuses, with words, a command that is not JSON or not a known one, echoing what it could read', async () => {
    const rig = await startLinkRig();
    assert.deepEqual(await rig.command('{"id":"m1", cmd: ping'), refused('m1', null, 'invalid_request', 'The command is not JSON.'));
    assert.deepEqual(warnings(rig), [{ level: 'warn', message: 'Fleet link: a malformed command was refused', data: { id: 'm1', message: 'The command is not JSON.' } }]);
    const unknown = await rig.command({ id: 'm2', cmd: 'format-disk' });
    assert.deepEqual([unknown.id, unknown.cmd, (unknown.error as { code: string }).code], ['m2', 'format-disk', 'invalid_request']);
  });

  it('refuses a command without an expiry, one whose expiry has passed, and one whose message expiry is too long', async () => {
    const rig = await startLinkRig();
    assert.deepEqual(
      await rig.command({ id: 'e1', cmd: 'reload' }, { expirySeconds: null }),
      refused('e1', 'reload', 'invalid_request', 'The command carries no expiry: set "expiresAt" (an ISO time) in it, or publish it with an MQTT 5 message expiry interval, so a command kept for an offline kiosk cannot run long after it was meant.'),
    );
    assert.deepEqual(warnings(rig), [{ level: 'warn', message: 'Fleet link: a command was refused for its expiry', data: { id: 'e1', cmd: 'reload', code: 'invalid_request' } }]);
    const past = new Date(Date.parse(START_ISO) - 1).toISOString();
    assert.deepEqual(
      await rig.command({ id: 'e2', cmd: 'reload', expiresAt: past }, { expirySeconds: null }),
      refused('e2', 'reload', 'expired', `The command expired at ${past} (the kiosk's clock says ${START_ISO}); it was not run.`),
    );
    assert.deepEqual((await rig.command({ id: 'e3', cmd: 'reload' }, { expirySeconds: 2 * 86_400 })).error, { code: 'invalid_request', message: "The command's message expiry (172800 s) is longer than the 24 h a command may wait." });
    assert.deepEqual(rig.control.did, []);
    const future = new Date(Date.parse(START_ISO) + 60_000).toISOString();
    assert.deepEqual(await rig.command({ id: 'e4', cmd: 'reload', expiresAt: future }, { expirySeconds: null }), ok('e4', 'reload', { reloaded: true }));
    assert.deepEqual(rig.control.did, ['reload']);
  });

  it('rate limits commands: ten at once, then one a second, each refusal answered and logged', async () => {
    const rig = await startLinkRig({ link: { commandRate: undefined } });
    for (let n = 1; n <= 11; n++) rig.broker.deliver(T.cmd, JSON.stringify({ id: `r${n}`, cmd: 'ping' }), { properties: { messageExpiryInterval: 60 } });
    await until(() => rig.answers().length === 11);
    const answers = new Map(rig.answers().map((a) => [a.id, a]));
    assert.deepEqual(answers.get('r11'), refused('r11', null, 'rate_limited', 'Too many commands: this kiosk runs 10 at once, then at most 60 a minute; it was not run. Send it again later.'));
    assert.deepEqual([...answers.values()].filter((a) => a.ok).length, 10);
    assert.deepEqual(warnings(rig), [{ level: 'warn', message: 'Fleet link: too many commands; one was refused', data: { id: 'r11' } }]);
    await rig.clock.advance(1000);
    assert.equal((await rig.command({ id: 'r12', cmd: 'ping' })).ok, true);
  });

  it('answers a repeated id with the first answer and does not run it again, also after a restart of the kiosk', async () => {
    const rig = await startLinkRig();
    const first = await rig.command({ id: 'c2', cmd: 'reload' });
    assert.deepEqual(first, ok('c2', 'reload', { reloaded: true }));
    await rig.clock.advance(5000);
    assert.deepEqual(await rig.command({ id: 'c2', cmd: 'reload' }), first);
    assert.deepEqual(rig.logger.lines.at(-1), { level: 'info', message: 'Fleet link: a repeated command id; answering as before, not run again', data: { id: 'c2', cmd: 'reload' } });
    assert.deepEqual(rig.control.did, ['reload']);
    await rig.link.close();
    const again = await startLinkRig({ dir: rig.dir });
    assert.deepEqual(await again.command({ id: 'c2', cmd: 'reload' }), first);
    assert.deepEqual(again.control.did, []);
  });

  it('a repeat that arrives while the first still runs waits for its answer', async () => {
    const reloading = deferred<void>();
    const rig = await startLinkRig({ control: { reload: () => reloading.promise } });
    rig.broker.deliver(T.cmd, JSON.stringify({ id: 'slow', cmd: 'reload' }), { properties: { messageExpiryInterval: 60 } });
    rig.broker.deliver(T.cmd, JSON.stringify({ id: 'slow', cmd: 'reload' }), { properties: { messageExpiryInterval: 60 } });
    await barrier(rig);
    reloading.resolve();
    await until(() => rig.answers().length === 3);
    assert.deepEqual(rig.answers().slice(1), [ok('slow', 'reload', { reloaded: true }), ok('slow', 'reload', { reloaded: true })]);
  });

  it('keeps the last 200 commands in memory: an older one still running is then answered from the disk log', async () => {
    const reloading = deferred<void>();
    const rig = await startLinkRig({ control: { reload: () => reloading.promise } });
    const send = (body: unknown) => rig.broker.deliver(T.cmd, JSON.stringify(body), { properties: { messageExpiryInterval: 60 } });
    send({ id: 'slow', cmd: 'reload' });
    for (let n = 1; n <= 199; n++) send({ id: `p${n}`, cmd: 'ping' });
    await until(() => rig.answers().length === 199, { realTimeoutMs: 5000 });
    // 200 remembered: the repeat waits for the first run's answer.
    send({ id: 'slow', cmd: 'reload' });
    await barrier(rig);
    assert.equal(rig.answers().filter((a) => a.id === 'slow').length, 0);
    // One more: the oldest is forgotten in memory, and the disk log says it never finished.
    send({ id: 'p200', cmd: 'ping' });
    send({ id: 'slow', cmd: 'reload' });
    await barrier(rig);
    assert.deepEqual(
      rig.answers().filter((a) => a.id === 'slow'),
      [refused('slow', 'reload', 'duplicate', `Command "slow" (reload) was started at ${START_ISO} and never answered (the kiosk stopped during it); it is not run again. Send a new id to run it.`)],
    );
    reloading.resolve();
    await until(() => rig.answers().filter((a) => a.id === 'slow').length === 3);
    assert.deepEqual(rig.answers().filter((a) => a.id === 'slow').slice(1), [ok('slow', 'reload', { reloaded: true }), ok('slow', 'reload', { reloaded: true })]);
  });

  it('refuses a command needing what the kiosk lacks first, in the kiosk\'s words or the table\'s, before a call is touched', async () => {
    const rig = await startLinkRig({ control: { screenshot: undefined, reload: undefined, lacks: { reload: 'No page to reload here.' } } });
    rig.control.calling = true;
    assert.deepEqual(await rig.command({ id: 's1', cmd: 'screenshot', force: true }), refused('s1', 'screenshot', 'unsupported', 'This kiosk has no window to capture.'));
    assert.deepEqual(await rig.command({ id: 'r1', cmd: 'reload', force: true }), refused('r1', 'reload', 'unsupported', 'No page to reload here.'));
    assert.deepEqual((await rig.command({ id: 'p1', cmd: 'ping' })).ok, true);
    assert.deepEqual(rig.control.did, []);
    // A kiosk that says nothing itself gets the table's words.
    const bare = await startLinkRig({ control: { reload: undefined } });
    assert.deepEqual(await bare.command({ id: 'r2', cmd: 'reload', force: true }), refused('r2', 'reload', 'unsupported', 'This kiosk cannot reload its page from afar.'));
  });

  it('during a call refuses reload, restart and apply unless forced (then it hangs up first); ping, end-call and screenshot need no force', async () => {
    const rig = await startLinkRig();
    rig.control.calling = true;
    for (const [id, cmd] of [['b1', 'reload'], ['b2', 'restart']] as const) assert.deepEqual(await rig.command({ id, cmd }), refused(id, cmd, 'busy', BUSY(cmd)));
    assert.deepEqual(await rig.command({ id: 'b3', cmd: 'apply', settings: { idle: { promptSeconds: 60 } } }), refused('b3', 'apply', 'busy', BUSY('apply')));
    assert.equal((await rig.command({ id: 'b4', cmd: 'screenshot' })).ok, true);
    assert.equal((await rig.command({ id: 'b5', cmd: 'ping' })).ok, true);
    assert.deepEqual(rig.control.did, ['screenshot']);
    assert.deepEqual(await rig.command({ id: 'b6', cmd: 'reload', force: true }), ok('b6', 'reload', { reloaded: true }));
    assert.deepEqual(rig.control.did, ['screenshot', 'end-call', 'reload']);
    rig.control.calling = true;
    assert.deepEqual(await rig.command({ id: 'b7', cmd: 'apply', force: true, settings: { idle: { promptSeconds: 60 } } }), ok('b7', 'apply', { applied: ['idle'] }));
    assert.deepEqual(rig.control.did, ['screenshot', 'end-call', 'reload', 'end-call', 'apply']);
    assert.equal(rig.control.calling, false);
    assert.deepEqual(await rig.command({ id: 'b8', cmd: 'reload', force: true }), ok('b8', 'reload', { reloaded: true }), 'force without a call just runs it');
    assert.deepEqual(rig.control.did.slice(5), ['reload']);
  });

  it('set-volume: the kiosk\'s volume, also during a call (it interrupts nothing); a kiosk without one answers unsupported', async () => {
    const volume = { percent: 100, set: async (p: number) => (rig.control.did.push(`volume ${p}`), (volume.percent = p)) };
    const rig = await startLinkRig({ control: { volume } });
    rig.control.calling = true;
    assert.deepEqual(await rig.command({ id: 'v1', cmd: 'set-volume', percent: 40 }), ok('v1', 'set-volume', { avatarVolume: 40 }));
    assert.deepEqual(rig.control.did, ['volume 40']);
    volume.set = async () => {
      throw new AvatarError('internal', 'The avatar volume could not be saved (EACCES); it stays at 40 %.');
    };
    assert.deepEqual(await rig.command({ id: 'v2', cmd: 'set-volume', percent: 50 }), refused('v2', 'set-volume', 'internal', 'The avatar volume could not be saved (EACCES); it stays at 40 %.'));
    const without = await startLinkRig();
    assert.deepEqual(await without.command({ id: 'v3', cmd: 'set-volume', percent: 40 }), refused('v3', 'set-volume', 'unsupported', "This kiosk cannot change the avatar's volume."));
  });

  it('runs every row as the table says: what it needs first, then the call it would interrupt', async () => {
    for (const name of COMMAND_NAMES) {
      const row = FLEET_COMMANDS[name];
      const arg = row.arg ? { [row.arg.field]: row.arg.kind === 'json' ? JSON.parse(row.arg.example) : row.arg.example } : {};
      if (row.needs !== null) {
        const lacking = await startLinkRig({ control: { [row.needs]: undefined } });
        lacking.control.calling = true;
        assert.deepEqual(await lacking.command({ id: `n-${name}`, cmd: name, force: true, ...arg }), refused(`n-${name}`, name, 'unsupported', MISSING_CAPABILITY[row.needs]), name);
        assert.deepEqual(lacking.control.did, [], `${name}: nothing done`);
      }
      const rig = await startLinkRig({ control: { volume: { percent: 100, set: async (p) => p } } });
      rig.control.calling = true;
      const answer = await rig.command({ id: `i-${name}`, cmd: name, ...arg });
      if (row.interrupts) assert.deepEqual(answer, refused(`i-${name}`, name, 'busy', BUSY(name)), name);
      else assert.notEqual((answer.error as { code?: string } | undefined)?.code, 'busy', name);
    }
  });

  it('end-call hangs up only a call under way, and says whether there was one', async () => {
    const rig = await startLinkRig();
    assert.deepEqual(await rig.command({ id: 'h1', cmd: 'end-call' }), ok('h1', 'end-call', { ended: false }));
    assert.deepEqual(rig.control.did, []);
    rig.control.calling = true;
    assert.deepEqual(await rig.command({ id: 'h2', cmd: 'end-call' }), ok('h2', 'end-call', { ended: true }));
    assert.deepEqual(rig.control.did, ['end-call']);
  });

  it('restarts only after the answer reached the broker, and never after a refused restart', async () => {
    let hold = true;
    const rig = await startLinkRig({ broker: (b) => (b.puback = (p) => (p.topic === T.result && hold ? 'hold' : 0)) });
    rig.broker.deliver(T.cmd, JSON.stringify({ id: 'x1', cmd: 'restart' }), { properties: { messageExpiryInterval: 60 } });
    await until(() => rig.answers().length === 1);
    await realDelay(30);
    assert.deepEqual(rig.control.did, [], 'the answer is not acknowledged yet');
    hold = false;
    rig.broker.releasePubacks();
    await until(() => rig.control.did.length === 1);
    assert.deepEqual(rig.answers(), [ok('x1', 'restart', { restarting: true })]);
    assert.deepEqual(rig.control.did, ['restart']);
    rig.control.calling = true;
    await rig.command({ id: 'x2', cmd: 'restart' });
    await barrier(rig);
    assert.deepEqual(rig.control.did, ['restart']);
  });

  it('answers what apply changed, and a failure as its code and message', async () => {
    const rig = await startLinkRig({
      control: {
        async apply(settings) {
          if (settings.cast) throw new AvatarError('invalid_config', 'There is no cast member "nobody" in this kiosk\'s avatars.');
          if (settings.idle) throw new Error('disk full');
          return { applied: ['avatar'] };
        },
      },
    });
    assert.deepEqual(await rig.command({ id: 'a1', cmd: 'apply', settings: { avatar: { name: 'Max' } } }), ok('a1', 'apply', { applied: ['avatar'] }));
    assert.deepEqual(await rig.command({ id: 'a2', cmd: 'apply', settings: { cast: ['nobody'] } }), refused('a2', 'apply', 'invalid_config', 'There is no cast member "nobody" in this kiosk\'s avatars.'));
    assert.deepEqual(await rig.command({ id: 'a3', cmd: 'apply', settings: { idle: { promptSeconds: 60 } } }), refused('a3', 'apply', 'internal', 'disk full'));
  });

  it('update commands: refused without an update feed, else check, install when idle, pin — each answered with the update status', async () => {
    const none = await startLinkRig();
    const UNAVAILABLE = 'Updates are not set up on this kiosk (no update.url in its settings).';
    assert.deepEqual(await none.command({ id: 'u0', cmd: 'update-check' }), refused('u0', 'update-check', 'unavailable', UNAVAILABLE));
    const off = await startLinkRig({ control: { updates: () => null } });
    assert.deepEqual(await off.command({ id: 'u1', cmd: 'update-install' }), refused('u1', 'update-install', 'unavailable', UNAVAILABLE));

    const did: string[] = [];
    const updates = recordingUpdates(did, {
      async pin(version) {
        if (version === '9.9.9') throw new AvatarError('forbidden', 'The policy sets the pin.');
        did.push(`pin ${version}`);
      },
    });
    const rig = await startLinkRig({ control: { updates: () => updates } });
    assert.deepEqual(await rig.command({ id: 'u2', cmd: 'update-check' }), ok('u2', 'update-check', { update: updates.status }));
    assert.deepEqual(did, ['check']);
    assert.deepEqual(await rig.command({ id: 'u3', cmd: 'update-install' }), ok('u3', 'update-install', { update: updates.status }));
    assert.deepEqual(await rig.command({ id: 'u4', cmd: 'update-pin', version: '1.4.2' }), ok('u4', 'update-pin', { update: updates.status }));
    assert.deepEqual(await rig.command({ id: 'u5', cmd: 'update-pin', version: null }), ok('u5', 'update-pin', { update: updates.status }));
    assert.deepEqual(did, ['check', 'install', 'pin 1.4.2', 'pin null']);
    assert.deepEqual(await rig.command({ id: 'u6', cmd: 'update-pin', version: '9.9.9' }), refused('u6', 'update-pin', 'forbidden', 'The policy sets the pin.'));
  });

  it('republishes the status after a command that changed it', async () => {
    const rig = await startLinkRig({
      control: {
        async endCall() {
          rig.fields.phase = 'ended';
        },
      },
    });
    await until(() => rig.broker.published(T.status).length === 1);
    await rig.clock.advance(1000);
    rig.control.calling = true;
    await rig.command({ id: 'h1', cmd: 'end-call' });
    await until(() => rig.broker.published(T.status).length === 2);
    assert.equal((rig.broker.published(T.status)[1]!.body as { phase: string }).phase, 'ended');
  });

  it('logs an answer the broker refused, and publishes none once closed', async () => {
    const refusing = await startLinkRig({ broker: (b) => (b.puback = (p) => (p.topic === T.result ? 135 : 0)) });
    await refusing.command({ id: 'n1', cmd: 'ping' });
    await until(() => warnings(refusing).length === 1);
    assert.deepEqual(warnings(refusing), [{ level: 'warn', message: 'Fleet link: a command answer was not published', data: { error: 'ErrorWithReasonCode: Publish error: Not authorized' } }]);

    const reloading = deferred<void>();
    const rig = await startLinkRig({ control: { reload: () => reloading.promise } });
    rig.broker.deliver(T.cmd, JSON.stringify({ id: 'late', cmd: 'reload' }), { properties: { messageExpiryInterval: 60 } });
    await until(() => rig.logger.lines.some((l) => l.message === 'Fleet link: command'));
    await rig.link.close();
    reloading.resolve();
    await realDelay(30);
    assert.deepEqual(rig.answers(), []);
    assert.deepEqual(warnings(rig), []);
  });
});

describe('mqtt link: screenshots', () => {
  it('answers the picture as base64 with its size; a repeat gets the answer without the picture', async () => {
    const png = Buffer.alloc(10_000, 7);
    const rig = await startLinkRig({ control: { screenshot: async () => ({ png, width: 100, height: 25 }) } });
    assert.deepEqual(await rig.command({ id: 's1', cmd: 'screenshot' }), ok('s1', 'screenshot', { mime: 'image/png', width: 100, height: 25, png: png.toString('base64') }));
    assert.deepEqual(await rig.command({ id: 's1', cmd: 'screenshot' }), ok('s1', 'screenshot', { mime: 'image/png', width: 100, height: 25, png: null, note: 'The picture was sent with the first answer; send a new id for a new screenshot.' }));
  });

  it('takes one screenshot at a time, also after one that failed', async () => {
    let shot = deferred<{ png: Buffer; width: number; height: number }>();
    const rig = await startLinkRig({ control: { screenshot: () => shot.promise } });
    rig.broker.deliver(T.cmd, JSON.stringify({ id: 's1', cmd: 'screenshot' }), { properties: { messageExpiryInterval: 60 } });
    assert.deepEqual(await rig.command({ id: 's2', cmd: 'screenshot' }), refused('s2', 'screenshot', 'busy', 'A screenshot is being taken; ask again when it has been answered.'));
    assert.equal((await rig.command({ id: 'p1', cmd: 'ping' })).ok, true, 'other commands are not held up');
    shot.reject(new AvatarError('not_ready', 'The window is gone.'));
    await until(() => rig.answers().some((a) => a.id === 's1'));
    assert.deepEqual(rig.answers().find((a) => a.id === 's1'), refused('s1', 'screenshot', 'not_ready', 'The window is gone.'));
    shot = deferred();
    shot.resolve({ png: Buffer.from('PNG'), width: 1, height: 1 });
    assert.equal((await rig.command({ id: 's3', cmd: 'screenshot' })).ok, true);
  });

  it('refuses a picture over 8 MiB, or one larger than the broker takes, and says which limit', async () => {
    let png = Buffer.alloc(8 * 1024 * 1024 + 1);
    const rig = await startLinkRig({ control: { screenshot: async () => ({ png, width: 1, height: 1 }) } });
    assert.deepEqual(await rig.command({ id: 'big1', cmd: 'screenshot' }), refused('big1', 'screenshot', 'too_large', 'The screenshot is 8388609 bytes, more than 8388608.'));
    // Exactly 8 MiB is sent.
    png = Buffer.alloc(8 * 1024 * 1024, 1);
    const sent = await rig.command({ id: 'big2', cmd: 'screenshot' });
    assert.equal(sent.ok, true);
    assert.equal(Buffer.from((sent.result as { png: string }).png, 'base64').length, 8 * 1024 * 1024);

    // The broker's own limit (CONNACK maximumPacketSize): the picture as base64 plus 1 KiB must fit.
    const small = await startLinkRig({ control: { screenshot: async () => ({ png, width: 1, height: 1 }) }, broker: (b) => (b.connack = { sessionPresent: false, properties: { maximumPacketSize: 5024 } }) });
    png = Buffer.alloc(3001);
    assert.deepEqual(await small.command({ id: 'b1', cmd: 'screenshot' }), refused('b1', 'screenshot', 'too_large', 'The screenshot is 3001 bytes, more than the broker takes (5024 bytes a message).'));
    png = Buffer.alloc(3000);
    assert.equal((await small.command({ id: 'b2', cmd: 'screenshot' })).ok, true);

    // A broker that takes exactly the message this picture makes (4/3 of 8 MiB + 1, plus 1 KiB): the kiosk's own limit is the one said.
    const large = await startLinkRig({ control: { screenshot: async () => ({ png, width: 1, height: 1 }) }, broker: (b) => (b.connack = { sessionPresent: false, properties: { maximumPacketSize: 2_796_203 * 4 + 1024 } }) });
    png = Buffer.alloc(8 * 1024 * 1024 + 1);
    assert.deepEqual((await large.command({ id: 'l1', cmd: 'screenshot' })).error, { code: 'too_large', message: 'The screenshot is 8388609 bytes, more than 8388608.' });
  });
});
