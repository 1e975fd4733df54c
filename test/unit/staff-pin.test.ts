import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../electron/core/clock.ts';
import { AvatarError } from '../../electron/core/errors.ts';
import { createStaffPin, hashPin, parsePinHash, verifyPin, PIN_LOCKOUT_MS, STAFF_IDLE_MS } from '../../electron/operations/staff-pin.ts';

function setup(initialHash: string | null = null) {
  const clock = new FakeClock();
  let stored = initialHash;
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
  });
  return { clock, pin, saved, setRunning: (v: boolean) => (running = v), stored: () => stored };
}

async function rejects(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof AvatarError && e.code === code && message.test(e.message));
}

describe('PIN hash', () => {
  it('is salted scrypt: the same PIN hashes differently, verifies, and the PIN is not in it', async () => {
    const a = await hashPin('2468');
    const b = await hashPin('2468');
    assert.notEqual(a, b);
    assert.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.ok(!a.includes('2468'));
    assert.equal(await verifyPin('2468', a), true);
    assert.equal(await verifyPin('2469', a), false);
    assert.equal(await verifyPin('2468', b), true);
  });

  it('refuses malformed or hostile stored hashes (never unlocks)', async () => {
    for (const bad of ['', '2468', 'scrypt$16384$8$1$c2FsdA==', 'bcrypt$16384$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==', 'scrypt$1073741824$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==', 'scrypt$1000$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==']) {
      assert.equal(parsePinHash(bad), null, bad);
      assert.equal(await verifyPin('2468', bad), false);
    }
  });

  it('rejects PINs that are not 4–8 digits', async () => {
    for (const bad of ['123', '123456789', '12a4', '']) await rejects(hashPin(bad), 'invalid_request', /4 to 8 digits/);
  });
});

describe('StaffPin', () => {
  it('first use: no PIN, setting one stores only a hash and opens the panel', async () => {
    const { pin, saved } = setup();
    assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5 });
    await rejects(pin.unlock('1234'), 'invalid_request', /No staff PIN is set/);
    const s = await pin.setPin('1234');
    assert.deepEqual(s, { pinSet: true, unlocked: true, lockedForMs: 0, attemptsLeft: 5 });
    assert.equal(saved.length, 1);
    assert.equal(await verifyPin('1234', saved[0]!), true);
  });

  it('a PIN from config unlocks; changing it later needs the panel unlocked', async () => {
    const { pin, saved } = setup(await hashPin('9999'));
    await rejects(pin.setPin('1111'), 'unauthorized', /Unlock the staff panel/);
    assert.equal(saved.length, 0);
    assert.equal((await pin.unlock('9999')).unlocked, true);
    await pin.setPin('1111');
    assert.equal(await verifyPin('1111', saved[0]!), true);
    pin.lock();
    assert.equal(pin.state().unlocked, false);
  });

  it('5 wrong tries lock the pad for 60 s, saying tries and seconds left; then the tries come back', async () => {
    const { pin, clock } = setup(await hashPin('2468'));
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
    assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: PIN_LOCKOUT_MS, attemptsLeft: 0 });
    // Even the right PIN is refused while locked.
    await clock.advance(20_500);
    await rejects(pin.unlock('2468'), 'locked', /Try again in 40 s/);
    await clock.advance(39_500);
    assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: 0, attemptsLeft: 5 });
    assert.equal((await pin.unlock('2468')).unlocked, true);
    assert.equal(clock.pendingCount, 0);
  });

  it('a right PIN resets the count of wrong tries', async () => {
    const { pin } = setup(await hashPin('2468'));
    await assert.rejects(pin.unlock('1111'));
    await assert.rejects(pin.unlock('1111'));
    assert.equal(pin.state().attemptsLeft, 3);
    await pin.unlock('2468');
    assert.equal(pin.state().attemptsLeft, 5);
  });

  it('unlocking is refused during a call, and a call starting closes the panel', async () => {
    const { pin, setRunning } = setup(await hashPin('2468'));
    setRunning(true);
    await rejects(pin.unlock('2468'), 'invalid_request', /cannot open during a call/);
    assert.equal(pin.state().attemptsLeft, 5, 'a refused unlock is not a wrong try');
    setRunning(false);
    await pin.unlock('2468');
    setRunning(true);
    assert.equal(pin.touch(), false);
    setRunning(false);
    assert.equal(pin.touch(), false, 'stays locked after the call');
  });

  it('the unlock is forgotten 60 s after the last staff call; each call refreshes it', async () => {
    const { pin, clock } = setup(await hashPin('2468'));
    await pin.unlock('2468');
    await clock.advance(STAFF_IDLE_MS - 1);
    assert.equal(pin.touch(), true);
    await clock.advance(STAFF_IDLE_MS - 1);
    assert.equal(pin.state().unlocked, true);
    await clock.advance(1);
    assert.equal(pin.state().unlocked, false);
    assert.equal(pin.touch(), false);
  });
});
