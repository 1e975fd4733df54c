/**
 * Renderer errors forwarded to main's log (renderer/src/app/report-errors.ts): what is sent for an
 * error and a rejection, the size limits of the contract, and the per-minute cap.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KioskApi, ReportErrorArgs, Result } from '../../../electron/contract.ts';
import { MAX_PER_MINUTE, forwardRendererErrors } from '../../../renderer/src/app/report-errors.ts';
import { reportErrorArgsSchema } from '../../../electron/contract.ts';

class FakeTarget {
  readonly listeners = new Map<string, Set<(e: Event) => void>>();
  addEventListener(type: string, l: (e: Event) => void): void {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(l);
  }
  removeEventListener(type: string, l: (e: Event) => void): void {
    this.listeners.get(type)?.delete(l);
  }
  fire(type: string, event: object): void {
    for (const l of this.listeners.get(type) ?? []) l(event as Event);
  }
}

function setup() {
  const sent: ReportErrorArgs[] = [];
  const app: KioskApi['app'] = {
    reportError: async (args): Promise<Result<void>> => {
      sent.push(args);
      return { ok: true, value: undefined };
    },
  };
  let now = 0;
  const target = new FakeTarget();
  const off = forwardRendererErrors(app, target, () => now);
  return { sent, target, off, setNow: (ms: number) => (now = ms) };
}

describe('forwardRendererErrors', () => {
  it('sends an uncaught error and an unhandled rejection with their stacks, within the contract', () => {
    const { sent, target } = setup();
    const err = new TypeError('x is not a function');
    target.fire('error', { error: err, message: err.message, filename: 'app://index.js', lineno: 12 });
    target.fire('unhandledrejection', { reason: 'boom' });
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.message, 'TypeError: x is not a function');
    assert.equal(sent[0]!.source, 'app://index.js:12');
    assert.match(sent[0]!.stack ?? '', /TypeError: x is not a function/);
    assert.deepEqual(sent[1], { message: 'Unhandled rejection: boom', source: 'unhandledrejection' });
    for (const args of sent) assert.equal(reportErrorArgsSchema.safeParse(args).success, true);
  });

  it('truncates to the contract limits', () => {
    const { sent, target } = setup();
    const err = new Error('m'.repeat(5000));
    err.stack = 's'.repeat(20_000);
    target.fire('error', { error: err, message: '', filename: 'f'.repeat(500), lineno: 1 });
    assert.equal(sent[0]!.message.length, 2000);
    assert.equal(sent[0]!.stack!.length, 8000);
    assert.equal(sent[0]!.source!.length, 200);
    assert.equal(reportErrorArgsSchema.safeParse(sent[0]).success, true);
  });

  it(`sends at most ${MAX_PER_MINUTE} a minute, then says how many were dropped`, () => {
    const { sent, target, setNow } = setup();
    for (let i = 0; i < 25; i++) target.fire('unhandledrejection', { reason: `r${i}` });
    assert.equal(sent.length, MAX_PER_MINUTE);
    setNow(60_000);
    target.fire('unhandledrejection', { reason: 'later' });
    assert.deepEqual(
      sent.slice(MAX_PER_MINUTE).map((a) => a.message),
      ['15 more renderer errors were not reported (rate limit).', 'Unhandled rejection: later'],
    );
  });

  it('stops listening when disposed, and does nothing without the bridge', () => {
    const { sent, target, off } = setup();
    off();
    target.fire('error', { error: new Error('late'), message: 'late' });
    assert.equal(sent.length, 0);
    assert.equal(target.listeners.get('error')?.size, 0);
    const t2 = new FakeTarget();
    forwardRendererErrors(null, t2)();
    assert.equal(t2.listeners.size, 0);
  });
});
