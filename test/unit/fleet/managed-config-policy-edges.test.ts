/**
 * Edges of two fleet decisions a remote operator relies on: how a command payload is read (which id and
 * command name the refusal reports, in words) and which update offer a kiosk takes. Each case here was
 * a changed line that no other test noticed (mutation testing, `npm run mutate -- fleet-logic`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMAND_NAMES, parseCommand } from '../../../electron/fleet/commands.ts';
import { offerAccepted, updateFeed } from '../../../electron/fleet/update-policy.ts';
import { updateSchema } from '../../../electron/kiosk/fleet-config.ts';

const ID_RULE = 'must be 1-64 letters, digits, ".", "_", ":" or "-"';

describe('fleet command payloads', () => {
  it('parses every command kind, from a string or from the raw MQTT bytes', () => {
    for (const cmd of ['ping', 'reload', 'restart', 'end-call', 'screenshot'] as const) {
      const text = JSON.stringify({ id: 'a.b:c_d-1', cmd });
      assert.deepEqual(parseCommand(text), { ok: true, command: { id: 'a.b:c_d-1', cmd } }, cmd);
      assert.deepEqual(parseCommand(Buffer.from(text, 'utf8')), { ok: true, command: { id: 'a.b:c_d-1', cmd } }, `${cmd} as bytes`);
    }
  });

  it('an id with other characters around valid ones, or too long, is refused, and echoed back as read (at most 64 characters) so the operator can match the answer', () => {
    for (const badId of ['abc$', '$abc', 'a b', 'x'.repeat(65)]) {
      assert.deepEqual(parseCommand(JSON.stringify({ id: badId, cmd: 'ping' })), {
        ok: false,
        id: badId.slice(0, 64),
        cmd: 'ping',
        message: `Invalid command at "id": ${ID_RULE}.`,
      }, badId);
    }
    const numeric = parseCommand('{"id":5,"cmd":"ping"}');
    assert.equal(numeric.ok === false && numeric.id, '5');
  });

  it('a payload that is not JSON is refused as such, with the id it began with', () => {
    assert.deepEqual(parseCommand('{"id":"1",'), { ok: false, id: '1', cmd: null, message: 'The command is not JSON.' });
  });

  it('anything but a JSON object is refused with an example of one', () => {
    for (const payload of ['null', '[1]', '7', '"ping"']) {
      assert.deepEqual(parseCommand(payload), {
        ok: false,
        id: null,
        cmd: null,
        message: 'The command must be a JSON object such as {"id":"1","cmd":"ping"}.',
      }, payload);
    }
  });

  it('a missing or non-text command name is reported at "cmd", not as an unknown command', () => {
    for (const payload of ['{"id":"1"}', '{"id":"1","cmd":5}']) {
      const r = parseCommand(payload);
      assert.equal(r.ok, false);
      assert.ok(!r.ok);
      assert.equal(r.id, '1');
      assert.equal(r.cmd, null);
      assert.match(r.message, /^Invalid command at "cmd": /, payload);
    }
  });

  it('an unknown command name is echoed cut to 32 characters', () => {
    const r = parseCommand(JSON.stringify({ id: '1', cmd: 'x'.repeat(40) }));
    const cut = 'x'.repeat(32);
    assert.deepEqual(r, { ok: false, id: '1', cmd: cut, message: `Unknown command "${cut}"; known: ${COMMAND_NAMES.join(', ')}.` });
  });

  it('"apply" names the nested setting it may not change, and the nested field that is out of range', () => {
    assert.deepEqual(parseCommand('{"id":"1","cmd":"apply","settings":{"avatar":{"voice":"x"}}}'), {
      ok: false,
      id: '1',
      cmd: 'apply',
      message: '"apply" cannot change "avatar.voice"; it may change only avatar.name, avatar.persona, cast, schedule, idle.promptSeconds, idle.hangupSeconds.',
    });
    const r = parseCommand('{"id":"1","cmd":"apply","settings":{"idle":{"promptSeconds":5}}}');
    assert.ok(!r.ok);
    assert.match(r.message, /^Invalid command at "settings\.idle\.promptSeconds": /);
  });
  it('an unknown top-level field is named as such (it is not an "apply" setting)', () => {
    const r = parseCommand('{"id":"1","cmd":"ping","extra":1}');
    assert.ok(!r.ok);
    assert.match(r.message, /^Invalid command at "extra": /);
  });

  describe('"apply" takes each setting up to its bound and refuses one past it, naming the field', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
    const accepted: Array<[string, unknown]> = [
      ['a one-letter name', { avatar: { name: 'n' } }],
      ['a 64-letter name', { avatar: { name: 'n'.repeat(64) } }],
      ['a one-letter persona', { avatar: { persona: 'p' } }],
      ['a 20,000-letter persona', { avatar: { persona: 'p'.repeat(20_000) } }],
      ['one cast member', { cast: ['a'] }],
      ['twelve cast members', { cast: ids(12) }],
      ['a 64-character cast id with "-" and "_"', { cast: ['A' + 'b-_'.repeat(21)] }],
      ['prompt after 10 s', { idle: { promptSeconds: 10 } }],
      ['prompt after 600 s', { idle: { promptSeconds: 600 } }],
      ['hang up after 5 s', { idle: { hangupSeconds: 5 } }],
      ['hang up after 120 s', { idle: { hangupSeconds: 120 } }],
    ];
    for (const [what, settings] of accepted) {
      it(`accepts ${what}`, () => {
        assert.deepEqual(parseCommand(JSON.stringify({ id: '1', cmd: 'apply', settings })), { ok: true, command: { id: '1', cmd: 'apply', settings } });
      });
    }
    const refused: Array<[string, unknown, string]> = [
      ['an empty name', { avatar: { name: '' } }, 'settings.avatar.name'],
      ['a 65-letter name', { avatar: { name: 'n'.repeat(65) } }, 'settings.avatar.name'],
      ['a 20,001-letter persona', { avatar: { persona: 'p'.repeat(20_001) } }, 'settings.avatar.persona'],
      ['no cast member', { cast: [] }, 'settings.cast'],
      ['thirteen cast members', { cast: ids(13) }, 'settings.cast'],
      ['a 65-character cast id', { cast: ['a'.repeat(65)] }, 'settings.cast.0'],
      ['a cast id starting with "_"', { cast: ['_x'] }, 'settings.cast.0'],
      ['a cast id with a "."', { cast: ['a.b'] }, 'settings.cast.0'],
      ['prompt after 601 s', { idle: { promptSeconds: 601 } }, 'settings.idle.promptSeconds'],
      ['hang up after 4 s', { idle: { hangupSeconds: 4 } }, 'settings.idle.hangupSeconds'],
      ['hang up after 121 s', { idle: { hangupSeconds: 121 } }, 'settings.idle.hangupSeconds'],
    ];
    for (const [what, settings, field] of refused) {
      it(`refuses ${what}`, () => {
        const r = parseCommand(JSON.stringify({ id: '1', cmd: 'apply', settings }));
        assert.ok(!r.ok);
        assert.ok(r.message.startsWith(`Invalid command at "${field}": `), r.message);
      });
    }
  });
});

describe('update feed and offers', () => {
  it('drops every trailing slash of the feed URL', () => {
    assert.equal(updateFeed(updateSchema.parse({ url: 'https://updates.example/kiosk//' }), '1.0.0')?.url, 'https://updates.example/kiosk');
    assert.equal(
      updateFeed(updateSchema.parse({ url: 'https://updates.example/kiosk//', pinVersion: '1.2.3' }), '1.0.0')?.url,
      'https://updates.example/kiosk/1.2.3',
    );
  });

  const feed = updateFeed(updateSchema.parse({ url: 'https://updates.example/kiosk' }), '1.0.0')!;
  it('an offer without a staging percentage (absent, null or empty) is for everyone', () => {
    for (const stagingPercentage of [undefined, null, '']) {
      assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: stagingPercentage as string | undefined }, 99.9), { accept: true, reason: 'no staged rollout' });
    }
  });

  it('a staging percentage that is not a number is ignored (everyone), and a numeric text is read', () => {
    assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: 'soon' }, 99.9), { accept: true, reason: 'no valid staging percentage' });
    assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: '25' }, 10), { accept: true, reason: 'inside the 25 % stage (kiosk at 10.0)' });
    assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: '25' }, 25), { accept: false, reason: 'outside the 25 % stage (kiosk at 25.0)' });
  });
});
