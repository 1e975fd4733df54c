/**
 * The staff PIN's edges: which stored hashes count as a PIN, which typed PINs are even tried, the exact
 * lock-out wording at its boundaries, setup that must stay shut, and a panel that must not reopen by
 * itself. Hashes here use scrypt's cheapest accepted cost (N = 1024, r = 1) so each check takes about a
 * millisecond; the production cost is covered by staff-pin.test.ts.
 */
import { scryptSync } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { createStaffPin, parsePinHash, verifyPin, type LockoutRecord, type StaffPinOptions } from '../../../electron/operations/staff-pin.ts';

interface HashShape {
  N?: number;
  r?: number;
  p?: number;
  saltBytes?: number;
  hashBytes?: number;
}

/** A stored hash as an installer's tool would write it (any PIN text, any accepted cost). */
function hashOf(pin: string, shape: HashShape = {}): string {
  const { N = 1024, r = 1, p = 1, saltBytes = 16, hashBytes = 32 } = shape;
  const salt = Buffer.alloc(saltBytes, 7);
  return ['scrypt', N, r, p, salt.toString('base64'), scryptSync(pin, salt, hashBytes, { N, r, p }).toString('base64')].join('$');
}

/** A hash of the right form whose digest is just `hashBytes` bytes (parse checks only, never verified). */
function shaped(shape: HashShape): string {
  const { N = 1024, r = 1, p = 1, saltBytes = 16, hashBytes = 32 } = shape;
  return ['scrypt', N, r, p, Buffer.alloc(saltBytes, 1).toString('base64'), Buffer.alloc(hashBytes, 2).toString('base64')].join('$');
}

function setup(over: Partial<StaffPinOptions> & { hash?: string | null; record?: LockoutRecord | null; startMs?: number } = {}) {
  const { hash = null, record = null, startMs, ...rest } = over;
  const clock = new FakeClock(startMs);
  const store = { hash, record, lockoutWrites: 0 };
  let running = false;
  const pin = createStaffPin({
    clock,
    loadHash: () => store.hash,
    saveHash: async (h) => void (store.hash = h),
    isSessionRunning: () => running,
    loadLockout: () => store.record,
    saveLockout: (r) => {
      store.lockoutWrites += 1;
      store.record = { ...r };
    },
    ...rest,
  });
  return { clock, pin, store, setRunning: (v: boolean) => (running = v) };
}

/** The code and message of a rejection, for exact comparison. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AvatarError, String(e));
    return `${e.code}: ${e.message}`;
  }
  assert.fail('expected a rejection');
}

describe('stored PIN hash: what counts as ours', () => {
  it('accepts the cheapest and the dearest cost it allows, and their exact salt and digest sizes', () => {
    assert.deepEqual(parsePinHash(shaped({ N: 1024, r: 1, p: 1 })), { N: 1024, r: 1, p: 1, salt: Buffer.alloc(16, 1), hash: Buffer.alloc(32, 2) });
    const dear = parsePinHash(shaped({ N: 1 << 20, r: 32, p: 16 }));
    assert.deepEqual([dear?.N, dear?.r, dear?.p], [1 << 20, 32, 16]);
    assert.equal(parsePinHash(shaped({ saltBytes: 8 }))?.salt.length, 8);
    assert.equal(parsePinHash(shaped({ hashBytes: 16 }))?.hash.length, 16);
    assert.equal(parsePinHash(shaped({ hashBytes: 64 }))?.hash.length, 64);
  });

  it('refuses costs outside the bounds (a hostile config must not ask for gigabytes) and short salts or odd digests', () => {
    const refused: Record<string, HashShape> = {
      'N below 1024': { N: 512 },
      'N not a power of two': { N: 3072 },
      'N a fraction': { N: 1024.5 },
      'N above 2^20': { N: 1 << 21 },
      'r zero': { r: 0 },
      'r negative': { r: -1 },
      'r above 32': { r: 33 },
      'p zero': { p: 0 },
      'p above 16': { p: 17 },
      'p a fraction': { p: 1.5 },
      'salt of 7 bytes': { saltBytes: 7 },
      'digest of 15 bytes': { hashBytes: 15 },
      'digest of 65 bytes': { hashBytes: 65 },
    };
    for (const [why, shape] of Object.entries(refused)) assert.equal(parsePinHash(shaped(shape)), null, why);
  });

  it('verifies at the cost the hash names, not at a default cost', async () => {
    // N = 1024, r = 1 also needs the memory allowance to be above what scrypt uses, never below zero.
    const stored = hashOf('482915');
    assert.equal(await verifyPin('482915', stored), true);
    assert.equal(await verifyPin('482916', stored), false);
    const wide = hashOf('482915', { N: 2048, r: 2, p: 2, saltBytes: 8, hashBytes: 16 });
    assert.equal(await verifyPin('482915', wide), true);
  });

  it('only 4 to 8 digits are ever tried, even when the stored hash was made from something else', async () => {
    // The pad has digits only; a hash hand-made from other text must not open it through IPC.
    for (const typed of ['123456789', 'ab123456', '1234567\n', ' 1234']) {
      assert.equal(await verifyPin(typed, hashOf(typed)), false, JSON.stringify(typed));
    }
    assert.equal(await verifyPin('1234', hashOf('1234')), true);
    assert.equal(await verifyPin('12345678', hashOf('12345678')), true);
  });
});

describe('StaffPin at its edges', () => {
  it('a stored value that is not a hash is no PIN: setup stays pending and unlock asks for one, counting no try', async () => {
    const { pin, store } = setup({ hash: 'scrypt$oops' });
    assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
    assert.equal(pin.setupPending(), true);
    assert.equal(await failure(pin.unlock('123456')), 'invalid_request: No staff PIN is set yet: choose one first.');
    assert.equal(pin.state().attemptsLeft, 5);
    assert.equal(store.lockoutWrites, 0);
  });

  it('a policy-managed PIN cannot be changed here, even with the panel open', async () => {
    const { pin, store } = setup({ hash: hashOf('135799'), managedByPolicy: () => true });
    await pin.unlock('135799');
    const before = store.hash;
    assert.equal(await failure(pin.setPin('246802')), "forbidden: The staff PIN is set by the administrator's policy file; change it there.");
    assert.equal(store.hash, before);
  });

  it('with setup blocked and no PIN, the kiosk is out of order: setup is pending, and choosing a PIN is forbidden with the reason', async () => {
    const why = 'A policy file exists, but names no staff PIN.';
    const { pin, store } = setup({ setupBlocked: () => why });
    assert.equal(pin.setupPending(), true);
    assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: why });
    assert.equal(await failure(pin.setPin('246802')), `forbidden: ${why}`);
    assert.equal(store.hash, null);
  });

  it('setup blocked at start does not open later when the block goes away (the kiosk may have served visitors)', async () => {
    let why: string | null = 'A policy file exists.';
    const { pin, store } = setup({ setupBlocked: () => why });
    assert.equal(pin.setupPending(), true);
    why = null;
    assert.equal(pin.setupPending(), false);
    assert.equal(await failure(pin.setPin('246802')), 'unauthorized: No staff PIN is set, and a PIN can only be chosen on the setup screen at start. Set staffPinHash in the configuration and restart the kiosk.');
    assert.equal(store.hash, null);
  });

  it('a first PIN of the wrong length is refused as invalid, and setup stays open for a good one', async () => {
    const { pin, store } = setup();
    assert.equal(await failure(pin.setPin('12345')), 'invalid_request: The PIN must be 6 to 8 digits.');
    assert.equal(store.hash, null);
    assert.equal(pin.setupPending(), true);
  });

  it('choosing the first PIN closes setup for good, even if the store then loses it', async () => {
    const { pin } = setup({ saveHash: async () => undefined }); // a store that keeps nothing
    const s = await pin.setPin('246802');
    assert.equal(s.pinSet, false);
    assert.equal(s.unlocked, true, 'the installer goes on to the settings');
    assert.equal(pin.setupPending(), false);
    pin.lock();
    assert.match(await failure(pin.setPin('111111')), /^unauthorized: No staff PIN is set, and a PIN can only be chosen/);
  });

  it('a fresh kiosk is not unlocked even when its clock reads near zero', () => {
    // A monotonic clock starts at 0: "never unlocked" must not read as "unlocked a moment ago".
    const { pin } = setup({ hash: hashOf('246802'), startMs: 0 });
    assert.equal(pin.state().unlocked, false);
    assert.equal(pin.touch(), false);
  });

  it('changing the PIN refreshes the panel\'s 60 s', async () => {
    const { pin, clock } = setup({ hash: hashOf('246802') });
    await pin.unlock('246802');
    await clock.advance(59_000);
    await pin.setPin('13579135');
    await clock.advance(59_000);
    assert.equal(pin.state().unlocked, true, '59 s after the change');
    await clock.advance(1_000);
    assert.equal(pin.state().unlocked, false, '60 s after the change');
  });

  it('a panel locked while the new PIN is being saved stays locked', async () => {
    const { pin, store } = setup({ hash: hashOf('246802') });
    await pin.unlock('246802');
    const changing = pin.setPin('13579135');
    pin.lock(); // staff walked away (or the idle timer closed it) during the save
    const s = await changing;
    assert.equal(s.unlocked, false);
    assert.equal(await verifyPin('13579135', store.hash!), true);
    assert.equal(pin.touch(), false);
  });

  it('two PIN checks at once: the second is turned away without costing a try', async () => {
    const { pin } = setup({ hash: hashOf('246802') });
    const first = pin.unlock('000000');
    assert.equal(await failure(pin.unlock('111111')), 'invalid_request: A PIN is being checked; try again.');
    assert.equal(await failure(first), 'unauthorized: Wrong PIN. 4 tries left.');
    // Once the first check is over, the next one is heard.
    assert.equal(await failure(pin.unlock('111111')), 'unauthorized: Wrong PIN. 3 tries left.');
  });

  it('a relaunch inside a lock-out shows no tries left, whatever the stored count of wrong tries', () => {
    const { clock } = setup();
    const { pin } = setup({ hash: hashOf('246802'), record: { failures: 2, level: 1, lockedUntilMs: clock.now() + 30_000 } });
    assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: 30_000, attemptsLeft: 0, outOfOrder: null });
  });

  it('the wait is said in seconds under 2 min and in whole minutes from 2 min', async () => {
    const { clock } = setup();
    const now = clock.now();
    const said = async (leftMs: number): Promise<string> => {
      const { pin } = setup({ hash: hashOf('246802'), record: { failures: 5, level: 2, lockedUntilMs: now + leftMs } });
      return failure(pin.unlock('246802'));
    };
    assert.equal(await said(300_000), 'locked: Too many wrong PINs. Try again in 5 min.');
    assert.equal(await said(120_001), 'locked: Too many wrong PINs. Try again in 3 min.');
    assert.equal(await said(120_000), 'locked: Too many wrong PINs. Try again in 2 min.');
    assert.equal(await said(119_999), 'locked: Too many wrong PINs. Try again in 120 s.');
    assert.equal(await said(1), 'locked: Too many wrong PINs. Try again in 1 s.');
  });

  it('a right PIN after wrong tries clears the stored count; a right PIN with none writes nothing', async () => {
    const { pin, store } = setup({ hash: hashOf('246802') });
    await pin.unlock('246802');
    assert.deepEqual([store.lockoutWrites, store.record], [0, null], 'nothing to clear');
    pin.lock();
    await assert.rejects(pin.unlock('000000'));
    await assert.rejects(pin.unlock('000000'));
    assert.deepEqual(store.record, { failures: 2, level: 0, lockedUntilMs: 0 });
    await pin.unlock('246802');
    assert.deepEqual(store.record, { failures: 0, level: 0, lockedUntilMs: 0 });
    assert.equal(store.lockoutWrites, 3);
  });

  it('a 6-digit PIN is long enough; a 5-digit one from before is flagged', async () => {
    const six = setup({ hash: hashOf('246802') });
    await six.pin.unlock('246802');
    assert.equal(six.pin.pinTooShort, false);
    const five = setup({ hash: hashOf('24680') });
    await five.pin.unlock('24680');
    assert.equal(five.pin.pinTooShort, true);
  });
});
