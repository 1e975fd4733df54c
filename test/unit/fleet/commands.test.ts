/**
 * How a fleet command is read, beyond what the broker tests reach: a payload from text or from the raw MQTT
 * bytes; what a refusal names (the id echoed as read, the field at fault, an unknown command cut short), each
 * "apply" setting at its bound and one past it; the update commands and the versions `update-pin` takes, an
 * expiry with a zone offset, which commands would cut a call short, and the id echoed from a payload that is
 * not a command (spacing, numbers, the 64 KiB bound, control characters). Each answer is the exact one an
 * operator sees. Every row of the table (command-table.ts) has its cases here: what it accepts and what it
 * refuses, in words (a new row without them does not compile).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { COMMAND_NAMES, FLEET_COMMANDS, commandRow, commandViews, type CommandName } from '../../../electron/fleet/command-table.ts';
import { INTERRUPTING, parseCommand, readCommandId } from '../../../electron/fleet/commands.ts';

const parse = (value: unknown) => parseCommand(JSON.stringify(value));

const unknownKey = (key: string) => `Invalid command at "${key}": Unrecognized key: "${key}".`;
const APPLY_ONLY = 'it may change only avatar.name, avatar.persona, cast, schedule, idle.promptSeconds, idle.hangupSeconds.';
const ID_RULE = 'must be 1-64 letters, digits, ".", "_", ":" or "-"';
const VOLUME_RULE = 'Invalid command at "percent": the volume is a whole percent from 0 to 100.';

/** Per row: arguments it accepts (beside id and cmd), and arguments it refuses with the exact message. */
const CASES: Record<CommandName, { accepts: Array<Record<string, unknown>>; refuses: Array<[Record<string, unknown>, string]> }> = {
  ping: { accepts: [{}, { force: true }], refuses: [[{ percent: 3 }, unknownKey('percent')]] },
  reload: { accepts: [{}, { force: false }], refuses: [[{ settings: {} }, unknownKey('settings')]] },
  restart: { accepts: [{}], refuses: [[{ force: 'yes' }, 'Invalid command at "force": Invalid input: expected boolean, received string.']] },
  'end-call': { accepts: [{}], refuses: [[{ cause: 'operator' }, unknownKey('cause')]] },
  screenshot: { accepts: [{}], refuses: [[{ width: 640 }, unknownKey('width')]] },
  apply: {
    accepts: [{ settings: { avatar: { name: 'Eva' } } }, { settings: { schedule: null } }, { settings: { idle: { promptSeconds: 60, hangupSeconds: 20 } } }],
    refuses: [
      [{}, 'Invalid command at "settings": Invalid input: expected object, received undefined.'],
      [{ settings: { apiKey: 'sk-x' } }, `"apply" cannot change "apiKey"; ${APPLY_ONLY}`],
      [{ settings: { avatar: { voice: 'Tina' } } }, `"apply" cannot change "avatar.voice"; ${APPLY_ONLY}`],
      [{ settings: { idle: { promptSeconds: 5 } } }, 'Invalid command at "settings.idle.promptSeconds": Too small: expected number to be >=10.'],
    ],
  },
  'update-check': { accepts: [{}], refuses: [[{ version: '1.4.2' }, unknownKey('version')]] },
  'update-install': { accepts: [{}], refuses: [[{ now: true }, unknownKey('now')]] },
  'update-pin': {
    accepts: [{ version: '1.4.2' }, { version: null }],
    refuses: [
      [{}, 'Invalid command at "version": Invalid input: expected string, received undefined.'],
      [{ version: 'latest' }, 'Invalid command at "version": must be a version such as "1.4.2", or null.'],
    ],
  },
  'set-volume': {
    accepts: [{ percent: 0 }, { percent: 40 }, { percent: 100 }, { percent: 40, force: true }],
    refuses: [
      [{}, VOLUME_RULE],
      [{ percent: -1 }, VOLUME_RULE],
      [{ percent: 101 }, VOLUME_RULE],
      [{ percent: 40.5 }, VOLUME_RULE],
      [{ percent: '40' }, VOLUME_RULE],
      [{ percent: null }, VOLUME_RULE],
      [{ percent: 40, volume: 40 }, unknownKey('volume')],
    ],
  },
};

describe('fleet commands: every row of the table', () => {
  it('has its cases here, in the table\'s order, and the unknown-command answer names exactly the table\'s commands', () => {
    assert.deepEqual(Object.keys(CASES), COMMAND_NAMES);
    assert.deepEqual(parse({ id: 'x', cmd: 'format-disk' }), { ok: false, id: 'x', cmd: 'format-disk', message: `Unknown command "format-disk"; known: ${COMMAND_NAMES.join(', ')}.` });
  });

  for (const name of COMMAND_NAMES) {
    it(`${name}: accepts its arguments and refuses others, in words`, () => {
      for (const args of CASES[name].accepts) assert.deepEqual(parse({ id: 'c1', cmd: name, ...args }), { ok: true, command: { id: 'c1', cmd: name, ...args } }, JSON.stringify(args));
      for (const [args, message] of CASES[name].refuses) assert.deepEqual(parse({ id: 'c1', cmd: name, ...args }), { ok: false, id: 'c1', cmd: name, message }, JSON.stringify(args));
    });
  }

  it('the argument the console and the CLI ask for is a field of the row, and its example is accepted', () => {
    for (const name of COMMAND_NAMES) {
      const arg = FLEET_COMMANDS[name].arg;
      if (!arg) continue;
      const value = arg.kind === 'json' ? JSON.parse(arg.example) : arg.example;
      assert.ok(arg.field in FLEET_COMMANDS[name].args, `${name}: ${arg.field}`);
      assert.equal(parse({ id: 'c1', cmd: name, [arg.field]: value }).ok, true, name);
    }
  });
});

describe('fleet commands: from text or from bytes', () => {
  it('parses every command kind, from a string or from the raw MQTT bytes', () => {
    for (const cmd of ['ping', 'reload', 'restart', 'end-call', 'screenshot'] as const) {
      const text = JSON.stringify({ id: 'a.b:c_d-1', cmd });
      assert.deepEqual(parseCommand(text), { ok: true, command: { id: 'a.b:c_d-1', cmd } }, cmd);
      assert.deepEqual(parseCommand(Buffer.from(text, 'utf8')), { ok: true, command: { id: 'a.b:c_d-1', cmd } }, `${cmd} as bytes`);
    }
  });
});

describe('fleet commands: what a refusal names', () => {
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
});

describe('fleet commands: "apply" takes each setting up to its bound and refuses one past it, naming the field', () => {
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

describe('fleet commands: the update commands', () => {
  it('update-check and update-install parse as themselves', () => {
    assert.deepEqual(parse({ id: 'u1', cmd: 'update-check' }), { ok: true, command: { id: 'u1', cmd: 'update-check' } });
    assert.deepEqual(parse({ id: 'u2', cmd: 'update-install' }), { ok: true, command: { id: 'u2', cmd: 'update-install' } });
  });

  it('update-pin takes a version such as 1.4.2 or 12.44.210-beta.1, or null', () => {
    for (const version of ['1.4.2', '12.44.210', '1.4.2-beta', '1.4.2-beta.1', '1.4.2-rc-2', null]) {
      assert.deepEqual(parse({ id: 'p', cmd: 'update-pin', version }), { ok: true, command: { id: 'p', cmd: 'update-pin', version } }, String(version));
    }
  });

  it('update-pin refuses anything else, and says what a version looks like', () => {
    for (const version of ['v1.4.2', 'x1.4.2', 'a.4.2', '1.b.2', '1.4.c', '1.4', '1.4.2 ', '1.4.2-', '1.4.2-beta!', '1.4.2+build']) {
      assert.deepEqual(
        parse({ id: 'p', cmd: 'update-pin', version }),
        { ok: false, id: 'p', cmd: 'update-pin', message: 'Invalid command at "version": must be a version such as "1.4.2", or null.' },
        version,
      );
    }
  });
});

describe('fleet commands: expiry', () => {
  it('an expiry may carry a zone offset; one that is not an ISO time is named with an example', () => {
    assert.deepEqual(parse({ id: 'e', cmd: 'ping', expiresAt: '2026-11-24T19:00:00+01:00' }), { ok: true, command: { id: 'e', cmd: 'ping', expiresAt: '2026-11-24T19:00:00+01:00' } });
    assert.deepEqual(parse({ id: 'e', cmd: 'ping', expiresAt: 'tomorrow' }), {
      ok: false,
      id: 'e',
      cmd: 'ping',
      message: 'Invalid command at "expiresAt": must be an ISO time such as "2026-11-24T18:00:00Z".',
    });
  });
});

describe('fleet commands: a key with no name', () => {
  it('an empty key at the top is named as the command itself, not as an empty field', () => {
    assert.deepEqual(parseCommand('{"id":"1","cmd":"ping","":1}'), { ok: false, id: '1', cmd: 'ping', message: 'Invalid command at "(command)": Unrecognized key: "".' });
  });
});

describe('fleet commands: which cut a call short', () => {
  it('reload, restart and apply are refused during a call unless forced; the others are not', () => {
    assert.deepEqual([...INTERRUPTING].sort(), ['apply', 'reload', 'restart']);
  });
});

describe('fleet commands: the id echoed from a payload that is not a command', () => {
  it('reads it from broken JSON with spaces around the colon, a long string id, or a number', () => {
    assert.equal(readCommandId('{"id" : "abc", broken'), 'abc');
    assert.equal(readCommandId('{"id":   "abc" oops'), 'abc');
    assert.equal(readCommandId('{"id":"abcdefgh", oops'), 'abcdefgh');
    assert.equal(readCommandId('{"id": 42, oops'), '42');
    assert.equal(readCommandId('{"id": -7, oops'), '-7');
  });

  it('reads it from bytes as from text', () => {
    assert.equal(readCommandId(Buffer.from('{"id":"from-bytes","cmd":"nope"}')), 'from-bytes');
    assert.equal(readCommandId(Buffer.from('{"id":"from-bytes", broken')), 'from-bytes');
  });

  it('reads only the first 64 KiB', () => {
    assert.equal(readCommandId(`${' '.repeat(70_000)}"id":"late"`), null);
    assert.equal(readCommandId(Buffer.from(`${' '.repeat(70_000)}"id":"late"`)), null);
    assert.equal(readCommandId(`"id":"early"${' '.repeat(70_000)}`), 'early');
  });

  it('a number that is not finite is no id; control characters are removed, and an id of only those is none', () => {
    assert.equal(readCommandId('{"id":1e400}'), null);
    assert.equal(readCommandId(JSON.stringify({ id: 'a\u0001b\u007fc' })), 'abc');
    assert.equal(readCommandId(JSON.stringify({ id: '\u0001\u0002' })), null);
  });
});

describe('the commands as the console’s page is given them', () => {
  it('one view per row, in the table’s order: its name, label, summary, whether it interrupts a call and its argument; no code', () => {
    const views = commandViews();
    assert.deepEqual(views.map((v) => v.cmd), [...COMMAND_NAMES]);
    for (const view of views) {
      const row = commandRow(view.cmd as CommandName);
      assert.deepEqual(view, { cmd: view.cmd, label: row.label, summary: row.summary, interrupts: row.interrupts, arg: row.arg });
    }
    // Plain data: it survives the trip to the page as it is.
    assert.deepEqual(JSON.parse(JSON.stringify(views)), views);
  });
});
