/**
 * The console's accounts (accounts.ts): a token made for each account, shown once and kept only as its
 * SHA-256 in a 0600 file; names checked; the running console reads a changed file again (on its injected
 * clock), keeps the accounts it had when the new file is invalid, and says so.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { accountsFromTokens, addAccount, listAccounts, openAccountsFile, RELOAD_CHECK_MS, removeAccount } from '../../../../electron/fleet/console/accounts.ts';
import { AvatarError } from '../../../../electron/core/errors.ts';
import { recordingLogger } from '../../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-fleet-accounts-');
const T0 = Date.parse('2026-11-24T10:00:00Z');
const refusal = (code: string, message: string) => (e: unknown) => e instanceof AvatarError && e.code === code && e.message === message;

describe('fleet console accounts', () => {
  it('adds an account with a new 192-bit token and keeps only its SHA-256, in a file only its owner reads', () => {
    const file = join(tempDir(), 'sub', 'accounts.json');
    const token = addAccount(file, 'ana', 'operator', T0);
    assert.match(token, /^[A-Za-z0-9_-]{32}$/, '24 random bytes, base64url');
    const text = readFileSync(file, 'utf8');
    assert.ok(!text.includes(token), 'the token is not in the file');
    assert.deepEqual(JSON.parse(text), { v: 1, accounts: [{ name: 'ana', role: 'operator', tokenSha256: createHash('sha256').update(token).digest('hex'), createdAt: '2026-11-24T10:00:00.000Z' }] });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const other = addAccount(file, 'wall', 'viewer', T0);
    assert.notEqual(other, token);
    assert.deepEqual(listAccounts(file), [{ name: 'ana', role: 'operator' }, { name: 'wall', role: 'viewer' }]);
    const book = openAccountsFile(file);
    assert.deepEqual([book.byToken(token), book.byToken(other), book.byToken('nope'), book.byToken('')], [{ name: 'ana', role: 'operator' }, { name: 'wall', role: 'viewer' }, null, null]);
  });

  it('refuses a second account of the same name and a name that is not one, with what to do', () => {
    const file = join(tempDir(), 'accounts.json');
    addAccount(file, 'ana', 'operator', T0);
    assert.throws(() => addAccount(file, 'ana', 'viewer', T0), refusal('invalid_request', 'There is already an account "ana"; remove it first to give it a new token.'));
    assert.throws(() => addAccount(file, '-x', 'viewer', T0), refusal('invalid_request', 'The account name "-x" must be 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit.'));
    assert.throws(() => addAccount(file, 'a b', 'viewer', T0), refusal('invalid_request', 'The account name "a b" must be 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit.'));
    assert.deepEqual(listAccounts(file), [{ name: 'ana', role: 'operator' }]);
  });

  it('says which file is wrong and where', () => {
    const file = join(tempDir(), 'accounts.json');
    writeFileSync(file, JSON.stringify({ v: 1, accounts: [{ name: 'ana', role: 'root', tokenSha256: 'a'.repeat(64), createdAt: 'x' }] }));
    assert.throws(() => listAccounts(file), refusal('invalid_config', `The accounts file ${file} is not valid at "accounts.0.role": Invalid option: expected one of "operator"|"viewer".`));
    writeFileSync(file, '{');
    assert.throws(() => openAccountsFile(file), (e: unknown) => e instanceof AvatarError && e.code === 'invalid_config' && e.message.startsWith(`The accounts file ${file} could not be read: `));
  });

  it('the running console reads a changed file again (at most every second): an added account gets in, a removed one no longer', () => {
    const file = join(tempDir(), 'accounts.json');
    const ana = addAccount(file, 'ana', 'operator', T0);
    let now = T0;
    const logger = recordingLogger();
    const book = openAccountsFile(file, { now: () => now, logger });
    const bo = addAccount(file, 'bo', 'viewer', T0);
    removeAccount(file, 'ana');
    now += RELOAD_CHECK_MS - 1;
    assert.deepEqual([book.byToken(ana), book.byToken(bo)], [{ name: 'ana', role: 'operator' }, null], 'not looked at again yet');
    now += 1;
    assert.deepEqual([book.byToken(ana), book.byToken(bo), book.byName('ana'), book.byName('bo')], [null, { name: 'bo', role: 'viewer' }, null, { name: 'bo', role: 'viewer' }]);
    assert.deepEqual(logger.lines, [{ level: 'warn', message: 'Fleet console: the accounts file changed; read again', data: { accounts: 1 } }]);

    // A broken file keeps the accounts read before.
    writeFileSync(file, '{"v":1,"accounts":[');
    now += RELOAD_CHECK_MS;
    assert.deepEqual(book.byToken(bo), { name: 'bo', role: 'viewer' });
    assert.equal(logger.lines[1]!.message, 'Fleet console: the accounts file changed and cannot be used; the accounts read before stay');
    assert.equal(logger.lines[1]!.level, 'error');
  });

  it('removeAccount answers whether there was one', () => {
    const file = join(tempDir(), 'accounts.json');
    assert.equal(removeAccount(file, 'ana'), false, 'no file');
    addAccount(file, 'ana', 'operator', T0);
    assert.equal(removeAccount(file, 'bo'), false);
    assert.equal(removeAccount(file, 'ana'), true);
    assert.deepEqual(listAccounts(file), []);
  });

  it('accounts given as tokens in memory find each by its token and name', () => {
    const book = accountsFromTokens([{ name: 'op', role: 'operator', token: 'op-token-0123456789abcdef' }]);
    assert.deepEqual([book.byToken('op-token-0123456789abcdef'), book.byToken('op-token'), book.byName('op'), book.list()], [{ name: 'op', role: 'operator' }, null, { name: 'op', role: 'operator' }, [{ name: 'op', role: 'operator' }]]);
  });
});
