/**
 * How a fleet command is read, at the edges the broker tests do not reach: the update commands and the
 * versions `update-pin` takes, an expiry with a zone offset, which commands would cut a call short, and the
 * id echoed from a payload that is not a command (spacing, numbers, the 64 KiB bound, control characters).
 * Each answer is the exact one an operator sees.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { INTERRUPTING, parseCommand, readCommandId } from '../../../electron/fleet/commands.ts';

const parse = (value: unknown) => parseCommand(JSON.stringify(value));

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
