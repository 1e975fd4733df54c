import { scryptSync } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../electron/core/clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { createStaffPin, guessablePinReason, hashPin, parsePinHash, verifyPin, PIN_LOCKOUT_MS, STAFF_IDLE_MS, type LockoutRecord } from '../../../electron/operations/staff-pin.ts';

/** A hash made before new PINs needed 6 digits (hashPin refuses 4 digits now). */
function legacyHash(pin: string): string {
  const salt = Buffer.from('0123456789abcdef');
  return ['scrypt', 16384, 8, 1, salt.toString('base64'), scryptSync(pin, salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64')].join('$');
}

function setup(initialHash: string | null = null, lockout?: { record: LockoutRecord | null }) {
  const clock = new FakeClock();
  let stored: string | null = initialHash;
  let running = false;
  const saved: string[] = [];
  const pin = createStaffPin({
    clock,
    loadHash: () => stored,
    saveHash: async (h) => {
      stored = h;
      saved.push(h);
    },
    isSessionRunning: () => running,
    ...(lockout
      ? {
          loadLockout: () => lockout.record,
          saveLockout: (r: LockoutRecord) => void (lockout.record = { ...r }),
        }
      : {}),
  });
  return { clock, pin, saved, setRunning: (v: boolean) => (running = v), stored: () => stored, setStored: (h: string | null) => (stored = h) };
}

async function rejects(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof AvatarError && e.code === code && message.test(e.message));
}

describe('PIN hash', () => {
  it('is salted scrypt: the same PIN hashes differently, verifies, and the PIN is not in it', async () => {
    const a = await hashPin('246813');
    const b = await hashPin('246813');
    assert.notEqual(a, b);
    assert.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.ok(!a.includes('246813'));
    assert.equal(await verifyPin('246813', a), true);
    assert.equal(await verifyPin('246814', a), false);
    assert.equal(await verifyPin('246813', b), true);
  });

  it('refuses malformed or hostile stored hashes (never unlocks)', async () => {
    for (const bad of ['', '246813', 'scrypt$16384$8$1$c2FsdA==', 'bcrypt$16384$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==', 'scrypt$1073741824$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==', 'scrypt$1000$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==']) {
      assert.equal(parsePinHash(bad), null, bad);
      assert.equal(await verifyPin('246813', bad), false);
    }
  });

  it('rejects new PINs that are not 6–8 digits (4 digits fall to a USB key injector in about a day)', async () => {
    for (const bad of ['123', '1234', '12345', '123456789', '12a456', '']) await rejects(hashPin(bad), 'invalid_request', /^The PIN must be 6 to 8 digits\.$/);
  });
});

describe('StaffPin', () => {
  it('first use: no PIN, setting one stores only a hash and opens the panel', async () => {
    const { pin, saved } = setup();
    assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
    await rejects(pin.unlock('470258'), 'invalid_request', /No staff PIN is set/);
    const s = await pin.setPin('470258');
    assert.deepEqual(s, { pinSet: true, unlocked: true, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
    assert.equal(saved.length, 1);
    assert.equal(await verifyPin('470258', saved[0]!), true);
  });

  it('refuses a guessable PIN at setup and says why: repeats, runs, repeated blocks, the most common ones', async () => {
    const { pin, saved } = setup();
    const refusals: Array<[string, string]> = [];
    for (const guessable of ['123456', '111111', '00000000', '654321', '7890123', '98765432', '121212', '123123', '12341234', '112233', '159753', '696969']) {
      try {
        await pin.setPin(guessable);
        refusals.push([guessable, 'accepted']);
      } catch (error) {
        refusals.push([guessable, (error as Error).message.replace(/^This PIN is easy to guess: (.*)\. Choose 6 to 8 digits with no pattern\.$/, '$1')]);
      }
    }
    assert.deepEqual(refusals, [
      ['123456', 'it is a run of digits'],
      ['111111', 'it is one digit repeated'],
      ['00000000', 'it is one digit repeated'],
      ['654321', 'it is a run of digits'],
      ['7890123', 'it is a run of digits'],
      ['98765432', 'it is a run of digits'],
      ['121212', 'it repeats a short block of digits'],
      ['123123', 'it repeats a short block of digits'],
      ['12341234', 'it repeats a short block of digits'],
      ['112233', 'it is one of the most common PINs'],
      ['159753', 'it is one of the most common PINs'],
      ['696969', 'it repeats a short block of digits'],
    ]);
    assert.equal(saved.length, 0, 'nothing stored');
    assert.equal(guessablePinReason('470258'), null);
    assert.equal(guessablePinReason('246813'), null);
    await pin.setPin('470258');
    assert.equal(saved.length, 1);
  });

  it('setup is open only until a PIN first exists: afterwards a missing PIN cannot be chosen without the old one', async () => {
    // A visitor who could choose the PIN would own the kiosk; the attract screen shows only once a PIN
    // exists, so a PIN vanishing later (config.json edited, the policy's hash removed) must not reopen setup.
    const { pin, saved, setStored } = setup();
    assert.equal(pin.setupPending(), true);
    await pin.setPin('246813');
    assert.equal(pin.setupPending(), false);
    pin.lock();
    setStored(null);
    assert.equal(pin.setupPending(), false, 'setup does not reopen');
    await rejects(pin.setPin('111111'), 'unauthorized', /can only be chosen on the setup screen at start/);
    assert.equal(saved.length, 1);
    assert.equal(pin.state().unlocked, false);
  });

  it('a kiosk that starts with a PIN never offers setup, even if the PIN later goes missing', async () => {
    const { pin, saved, setStored } = setup(await hashPin('999999'));
    assert.equal(pin.setupPending(), false);
    setStored(null);
    await rejects(pin.setPin('135790'), 'unauthorized', /can only be chosen on the setup screen at start/);
    assert.equal(saved.length, 0);
    assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
  });

  it('a PIN from config unlocks; changing it later needs the panel unlocked', async () => {
    const { pin, saved } = setup(await hashPin('999999'));
    await rejects(pin.setPin('583016'), 'unauthorized', /Unlock the staff panel/);
    assert.equal(saved.length, 0);
    assert.equal((await pin.unlock('999999')).unlocked, true);
    await pin.setPin('583016');
    assert.equal(await verifyPin('583016', saved[0]!), true);
    pin.lock();
    assert.equal(pin.state().unlocked, false);
  });

  it('5 wrong tries lock the pad for 60 s, saying tries and seconds left; then the tries come back', async () => {
    const { pin, clock } = setup(await hashPin('246813'));
    const messages: string[] = [];
    for (let i = 0; i < 4; i++) {
      await assert.rejects(pin.unlock('0000'), (e: AvatarError) => (messages.push(`${e.code}: ${e.message}`), true));
    }
    assert.deepEqual(messages, [
      'unauthorized: Wrong PIN. 4 tries left.',
      'unauthorized: Wrong PIN. 3 tries left.',
      'unauthorized: Wrong PIN. 2 tries left.',
      'unauthorized: Wrong PIN. 1 try left.',
    ]);
    await rejects(pin.unlock('0000'), 'locked', /locked for 60 s/);
    assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: PIN_LOCKOUT_MS, attemptsLeft: 0, outOfOrder: null });
    // Even the right PIN is refused while locked.
    await clock.advance(20_500);
    await rejects(pin.unlock('246813'), 'locked', /Try again in 40 s/);
    await clock.advance(39_500);
    assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
    assert.equal((await pin.unlock('246813')).unlocked, true);
    assert.equal(clock.pendingCount, 0);
  });

  it('a right PIN resets the count of wrong tries', async () => {
    const { pin } = setup(await hashPin('246813'));
    await assert.rejects(pin.unlock('1111'));
    await assert.rejects(pin.unlock('1111'));
    assert.equal(pin.state().attemptsLeft, 3);
    await pin.unlock('246813');
    assert.equal(pin.state().attemptsLeft, 5);
  });

  it('unlocking is refused during a call, and a call starting closes the panel', async () => {
    const { pin, setRunning } = setup(await hashPin('246813'));
    setRunning(true);
    await rejects(pin.unlock('246813'), 'invalid_request', /cannot open during a call/);
    assert.equal(pin.state().attemptsLeft, 5, 'a refused unlock is not a wrong try');
    setRunning(false);
    await pin.unlock('246813');
    setRunning(true);
    assert.equal(pin.touch(), false);
    setRunning(false);
    assert.equal(pin.touch(), false, 'stays locked after the call');
  });

  it('the unlock is forgotten 60 s after the last staff call; each call refreshes it', async () => {
    const { pin, clock } = setup(await hashPin('246813'));
    await pin.unlock('246813');
    await clock.advance(STAFF_IDLE_MS - 1);
    assert.equal(pin.touch(), true);
    await clock.advance(STAFF_IDLE_MS - 1);
    assert.equal(pin.state().unlocked, true);
    await clock.advance(1);
    assert.equal(pin.state().unlocked, false);
    assert.equal(pin.touch(), false);
  });

  it('each lock-out in a row is longer: 1 min, 5 min, 30 min, 2 h (then 2 h again); a right PIN starts over', async () => {
    const store = { record: null as LockoutRecord | null };
    const { pin, clock } = setup(await hashPin('246813'), store);
    const lockFor = async (): Promise<string> => {
      for (let i = 0; i < 4; i++) await assert.rejects(pin.unlock('0000'));
      let message = '';
      await assert.rejects(pin.unlock('0000'), (e: AvatarError) => ((message = e.message), e.code === 'locked'));
      return message;
    };
    const seen: Array<[string, number]> = [];
    for (let i = 0; i < 5; i++) {
      const message = await lockFor();
      const lockedForMs = pin.state().lockedForMs;
      seen.push([message, lockedForMs]);
      await clock.advance(lockedForMs);
    }
    assert.deepEqual(seen, [
      ['Too many wrong PINs. The pad is locked for 60 s.', 60_000],
      ['Too many wrong PINs. The pad is locked for 5 min.', 300_000],
      ['Too many wrong PINs. The pad is locked for 30 min.', 1_800_000],
      ['Too many wrong PINs. The pad is locked for 2 h.', 7_200_000],
      ['Too many wrong PINs. The pad is locked for 2 h.', 7_200_000],
    ]);
    assert.equal((await pin.unlock('246813')).unlocked, true);
    assert.deepEqual(store.record, { failures: 0, level: 0, lockedUntilMs: 0 });
    pin.lock();
    assert.equal(await lockFor(), 'Too many wrong PINs. The pad is locked for 60 s.');
  });

  it('the lock-out survives a relaunch (a new StaffPin over the same store), and so do the wrong tries', async () => {
    const hash = await hashPin('246813');
    const store = { record: null as LockoutRecord | null };
    const first = setup(hash, store);
    for (let i = 0; i < 3; i++) await assert.rejects(first.pin.unlock('0000'));
    // Pulling the plug does not give the guesser fresh tries.
    const second = setup(hash, store); // its clock starts where the first one stands
    assert.equal(second.clock.now(), first.clock.now());
    assert.equal(second.pin.state().attemptsLeft, 2);
    await assert.rejects(second.pin.unlock('0000'));
    await rejects(second.pin.unlock('0000'), 'locked', /locked for 60 s/);
    const third = setup(hash, store);
    await third.clock.advance(10_000);
    assert.deepEqual(third.pin.state(), { pinSet: true, unlocked: false, lockedForMs: 50_000, attemptsLeft: 0, outOfOrder: null });
    await rejects(third.pin.unlock('246813'), 'locked', /Try again in 50 s/);
  });

  it('a stored lock-out that is not ours counts as none; a clock set back cannot stretch it past its step', async () => {
    const hash = await hashPin('246813');
    const broken = setup(hash, { record: { failures: 'x' } as never });
    assert.deepEqual(broken.pin.state(), { pinSet: true, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
    const far = setup(hash, { record: { failures: 5, level: 2, lockedUntilMs: 10 ** 13 } });
    assert.equal(far.pin.state().lockedForMs, 300_000, 'at most the 5 min of its step');
  });

  it('a 4-digit PIN from before still unlocks, and is flagged so staff change it', async () => {
    const { pin } = setup(legacyHash('4321'));
    assert.equal(pin.pinTooShort, false);
    assert.equal((await pin.unlock('4321')).unlocked, true);
    assert.equal(pin.pinTooShort, true);
    await pin.setPin('43219876');
    assert.equal(pin.pinTooShort, false);
  });
});
