/** Awaiting a call that must fail with an AvatarError, so a test can compare the error a person would see. */
import assert from 'node:assert/strict';
import { AvatarError } from '../../electron/core/errors.ts';

/** The AvatarError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<AvatarError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AvatarError, `expected an AvatarError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}
