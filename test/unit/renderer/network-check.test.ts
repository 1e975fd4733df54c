/**
 * The screen's side of "Check the video network" (renderer/src/staff/network-check.svelte.ts) against a
 * scripted staff API and fake engines: it joins receive-only (prejoin, never join), measures the join on
 * the injected clock, always leaves, always reports to main (which ends the test session), and says
 * "This network blocks video calls" when the join fails or never answers.
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ok, fail, type KioskApi, type NetworkCheckOutcome, type Result, type RtcCredentials } from '../../../electron/contract.ts';
import type { LiveView, RtcEngine } from '../../../renderer/src/rtc/engine.ts';
import type { StaffCalls } from '../../../renderer/src/staff/calls.svelte.ts';

const { NetworkCheckRun, NETWORK_BLOCKED_MESSAGE } = await import('../../../renderer/src/staff/network-check.svelte.ts');

const RTC: RtcCredentials = { app_id: 'emulator-app', channel_id: 'live-audio-L1', user_id: 'live-user-C-L1', token: 'emu-rtc-j0-x', token_expire_at: '0' };
const VIEW = {} as LiveView;

function harness(prejoin: ((log: string[]) => Promise<void>) | null, options: { startFails?: boolean; joinTimeoutMs?: number; joinTakesMs?: number } = {}) {
  const log: string[] = [];
  let now = 1_000;
  const finished: NetworkCheckOutcome[] = [];
  const staff = {
    networkCheckStart: async () => (log.push('start'), options.startFails ? fail('insufficient_credits', 'The balance is under 45 credits.') : ok({ checkId: 'live-check', rtc: RTC, cloudProxy: 'tcp' as const })),
    networkCheckFinish: async ({ checkId, outcome }: { checkId: string; outcome: NetworkCheckOutcome }) => {
      log.push(`finish:${checkId}`);
      finished.push(outcome);
      return ok({ ...outcome, sessionClosed: true, creditsCost: 0 });
    },
  } as unknown as KioskApi['staff'];
  const calls = { call: <T>(fn: (s: KioskApi['staff']) => Promise<Result<T>>) => fn(staff) } as unknown as StaffCalls;
  const engine: RtcEngine = {
    kind: 'demo',
    ...(prejoin
      ? {
          prejoin: async (creds: RtcCredentials, mode: string) => {
            log.push(`prejoin:${creds.channel_id}:${mode}`);
            await prejoin(log);
            now += options.joinTakesMs ?? 0;
          },
        }
      : {}),
    join: async () => void log.push('join'),
    setMuted: async () => {},
    resumePlayback: () => {},
    onEvent: () => () => {},
    remoteMediaProgress: () => null,
    resubscribeRemote: async () => {},
    leave: async () => void log.push('leave'),
  };
  const run = new NetworkCheckRun({
    calls,
    engineFor: (rtc) => (log.push(`engine:${rtc.channel_id}`), engine),
    view: () => VIEW,
    now: () => now,
    ...(options.joinTimeoutMs !== undefined ? { joinTimeoutMs: options.joinTimeoutMs } : {}),
  });
  return { run, log, finished };
}

describe('NetworkCheckRun', () => {
  it('joins receive-only, measures the join, leaves, and reports it to main', async () => {
    const h = harness(async () => {}, { joinTakesMs: 412 });
    await h.run.run();
    assert.deepEqual(h.log, ['start', 'engine:live-audio-L1', 'prejoin:live-audio-L1:audio', 'leave', 'finish:live-check'], 'never join (no devices), always leave');
    assert.deepEqual(h.finished, [{ ok: true, joinMs: 412, state: 'connected', proxy: 'tcp', message: 'Joined the video network in 412 ms through the cloud proxy (TCP).' }]);
    assert.deepEqual(h.run.view, { status: 'done', report: { ...h.finished[0]!, sessionClosed: true, creditsCost: 0 } });
  });

  it('a failed join: "This network blocks video calls", still leaves and reports (main ends the session)', async () => {
    const h = harness(async () => {
      throw new Error('CAN_NOT_GET_GATEWAY_SERVER');
    });
    await h.run.run();
    assert.deepEqual(h.log, ['start', 'engine:live-audio-L1', 'prejoin:live-audio-L1:audio', 'leave', 'finish:live-check']);
    assert.deepEqual(h.finished, [{ ok: false, joinMs: null, state: 'failed', proxy: 'tcp', message: NETWORK_BLOCKED_MESSAGE }]);
    assert.match(NETWORK_BLOCKED_MESSAGE, /^This network blocks video calls/);
  });

  it('a join that never answers: timeout, leaves and reports', async () => {
    const h = harness(() => new Promise(() => {}), { joinTimeoutMs: 30 });
    await h.run.run();
    assert.deepEqual(h.log.slice(-2), ['leave', 'finish:live-check']);
    assert.equal(h.finished[0]!.state, 'timeout');
    assert.equal(h.finished[0]!.joinMs, null);
    assert.equal(h.finished[0]!.message, `${NETWORK_BLOCKED_MESSAGE} (No answer within 0 s through the cloud proxy (TCP).)`);
  });

  it('main refusing to start (no credits, a call running): the reason, and no engine', async () => {
    const h = harness(async () => {}, { startFails: true });
    await h.run.run();
    assert.deepEqual(h.log, ['start']);
    assert.deepEqual(h.run.view, { status: 'error', message: 'The balance is under 45 credits.' });
  });

  it('an engine without a receive-only join is not used to open devices', async () => {
    const h = harness(null);
    await h.run.run();
    assert.deepEqual(h.log, ['start', 'engine:live-audio-L1', 'leave', 'finish:live-check']);
    assert.equal(h.finished[0]!.ok, false);
    assert.equal(h.finished[0]!.state, 'failed');
  });
});
