/**
 * The core's one error type (errors.ts): AvatarError with its code, message, status, details and cause;
 * `toAvatarError` turning anything thrown into one (an abort becomes `cancelled`); `isAbortError` and
 * `throwIfAborted` for the cancellation paths.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError, isAbortError, isAvatarError, throwIfAborted, toAvatarError } from '../../../electron/core/errors.ts';

describe('AvatarError', () => {
  it('is named AvatarError and carries code, message, status and details', () => {
    const error = new AvatarError('server', 'Down.', { status: 503, details: { operation: 'x' } });
    assert.equal(error.name, 'AvatarError');
    assert.equal(error.code, 'server');
    assert.equal(error.message, 'Down.');
    assert.equal(error.status, 503);
    assert.deepEqual(error.details, { operation: 'x' });
    assert.deepEqual(error.toInfo(), { code: 'server', message: 'Down.' });
  });

  it('has a cause only when one is given', () => {
    const without = new AvatarError('internal', 'x');
    assert.equal('cause' in without, false);
    const root = new Error('root');
    assert.equal(new AvatarError('internal', 'x', { cause: root }).cause, root);
    // A falsy cause is still a cause.
    const zero = new AvatarError('internal', 'x', { cause: 0 });
    assert.equal('cause' in zero, true);
    assert.equal(zero.cause, 0);
  });

  it('isAvatarError says exactly whether a value is one', () => {
    assert.equal(isAvatarError(new AvatarError('internal', 'x')), true);
    assert.equal(isAvatarError(new Error('x')), false);
    assert.equal(isAvatarError({ code: 'internal', message: 'x' }), false);
  });
});

describe('toAvatarError', () => {
  it('keeps an AvatarError as it is', () => {
    const error = new AvatarError('timeout', 'slow');
    assert.equal(toAvatarError(error, 'network'), error);
  });

  it('wraps an Error with its message as internal (or the fallback), keeping it as cause', () => {
    const boom = new Error('boom');
    const wrapped = toAvatarError(boom);
    assert.ok(wrapped instanceof AvatarError);
    assert.equal(wrapped.code, 'internal');
    assert.equal(wrapped.message, 'boom');
    assert.equal(wrapped.cause, boom);
    assert.equal(toAvatarError(boom, 'network').code, 'network');
  });

  it('uses the string form of a non-Error, or of an Error without a message', () => {
    const text = toAvatarError('plain words');
    assert.ok(text instanceof AvatarError);
    assert.equal(text.message, 'plain words');
    assert.equal(text.cause, 'plain words');
    assert.equal(toAvatarError(new Error('')).message, 'Error');
    assert.equal(toAvatarError({ message: 'not an Error' }).message, '[object Object]');
  });

  it('turns an abort or a timeout abort into cancelled with the original as cause', () => {
    for (const name of ['AbortError', 'TimeoutError']) {
      const abort = Object.assign(new Error('aborted'), { name });
      const error = toAvatarError(abort, 'network');
      assert.equal(error.code, 'cancelled', name);
      assert.equal(error.message, 'The operation was cancelled.');
      assert.equal(error.cause, abort);
    }
  });
});

describe('isAbortError', () => {
  it('is true only for objects named AbortError or TimeoutError', () => {
    assert.equal(isAbortError(new DOMException('x', 'AbortError')), true);
    assert.equal(isAbortError({ name: 'TimeoutError' }), true);
    assert.equal(isAbortError({ name: 'AbortError' }), true);
    for (const value of [null, undefined, 'AbortError', { name: 'TypeError' }, { name: '' }, {}, new Error('AbortError'), { nom: 'AbortError' }]) {
      assert.equal(isAbortError(value), false, String(value));
    }
  });
});

describe('throwIfAborted', () => {
  it('does nothing without a signal or with a live one', () => {
    throwIfAborted(undefined);
    throwIfAborted(new AbortController().signal);
  });

  it('throws cancelled with the reason as cause once the signal fired', () => {
    const controller = new AbortController();
    const reason = new Error('left');
    controller.abort(reason);
    assert.throws(
      () => throwIfAborted(controller.signal),
      (e: unknown) => e instanceof AvatarError && e.code === 'cancelled' && e.message === 'The operation was cancelled.' && e.cause === reason,
    );
  });
});
