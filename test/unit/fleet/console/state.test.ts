/**
 * The fleet console's state from the payloads kiosks publish (the kiosk link's own status and event
 * shapes): since-times on the console's clock, repeats not counted twice, malformed payloads dropped and
 * counted, account trouble told apart, spend CSV that a spreadsheet cannot turn into a formula.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FleetState, spendCsv } from '../../../../electron/fleet/console/state.ts';
import type { FleetStatus } from '../../../../electron/fleet/mqtt-link.ts';
import type { SessionRecord } from '../../../../electron/operations/ledger.ts';
import { eventPayload as event, onlineStatus as online, PNG_1x1, T0 } from '../../../helpers/fleet-payloads.ts';

const session = (extra: Record<string, unknown>) => ({ kind: 'session', v: 1, start_at: '2026-11-24T09:59:00Z', end_at: '2026-11-24T10:00:00Z', end_reason: 'user_end', credits_cost: 2, ...extra });

describe('FleetState', () => {
  it('stamps online and offline with the console\'s clock; a stored offline status has no known time', () => {
    let now = T0;
    const state = new FleetState({ now: () => now });
    state.onStatus('gone', JSON.stringify({ online: false, kioskId: 'gone', reason: 'connection lost' }), true);
    assert.equal(state.row('gone')!.sinceAt, null);
    assert.equal(state.row('gone')!.offlineReason, 'connection lost');
    state.onStatus('k', online(), true);
    assert.equal(state.row('k')!.sinceAt, null, 'online before the console started: when is not known');
    state.onStatus('k', JSON.stringify({ online: false, kioskId: 'k', reason: 'stopped' }), false);
    state.onStatus('k', online(), false);
    assert.equal(state.row('k')!.sinceAt, new Date(T0).toISOString());
    now += 60_000;
    state.onStatus('k', online({ phase: 'live' }), false);
    state.onStatus('k', online({ phase: 'live' }), true);
    assert.equal(state.row('k')!.sinceAt, new Date(T0).toISOString(), 'a status change, or the stored copy again, is not a since-change');
    now += 60_000;
    state.onStatus('k', JSON.stringify({ online: false, kioskId: 'k', reason: 'connection lost' }), false);
    assert.deepEqual({ online: state.row('k')!.online, since: state.row('k')!.sinceAt, version: state.row('k')!.version }, { online: false, since: new Date(T0 + 120_000).toISOString(), version: '1.2.3' });
    assert.deepEqual(state.takeChanged().map((r) => r.kioskId).sort(), ['gone', 'k']);
    assert.deepEqual(state.takeChanged(), []);
  });

  it("reads the update state a kiosk with an update feed publishes (the link's own status type), not as malformed", () => {
    const state = new FleetState({ now: () => T0 });
    const status: FleetStatus = {
      online: true, kioskId: 'k', group: null, droppedEvents: 0, policyError: null, version: '1.4.2', mode: 'direct', phase: 'idle', cast: ['ava'], open: true, nextChangeAt: null,
      today: { sessions: 0, credits: 0 }, lastErrorCode: null, queued: 0, at: new Date(T0).toISOString(),
      update: { phase: 'ready', model: 'nsis-per-user', off: null, ready: '1.5.0', pinned: null, floor: null, installWhenIdle: false, lastCheckAt: null, lastError: null },
    };
    state.onStatus('k', JSON.stringify(status), false);
    assert.equal(state.malformed.status, 0);
    assert.equal(state.row('k')!.update, 'ready 1.5.0');
    state.onStatus('k', JSON.stringify({ ...status, update: { ...status.update!, phase: 'idle', ready: null, pinned: '1.4.2' } }), false);
    assert.equal(state.row('k')!.update, 'idle pinned 1.4.2');
  });

  it("an operator's end-call (the kiosk's end reason 'operator') is a normal end, not an error", () => {
    const state = new FleetState({ now: () => T0 });
    state.onStatus('k', online(), false);
    const record: SessionRecord = {
      kind: 'session', v: 1, start_at: '2026-11-24T09:59:00Z', live_at: '2026-11-24T09:59:02Z', end_at: '2026-11-24T10:00:00Z', live_id: 'l1', surface: 'direct',
      call_mode: 'video', time_to_live_ms: 2000, not_ready_retries: 0, reconnects: 0, end_reason: 'operator', ended_by: 'client', billed_seconds: 58, credits_cost: 87, recovered: false,
    };
    state.onEvent('k', event('k-op', record));
    assert.equal(state.row('k')!.lastErrorCode, null);
    assert.equal(state.counts().find((c) => c.row.kioskId === 'k')!.counts.errorsByCode.size, 0);
  });

  it('counts an event once however often QoS 1 delivers it; tells errors, stalls and account trouble apart', () => {
    const state = new FleetState({ now: () => T0 });
    state.onEvent('k', event('k-1', session({ credits_cost: 2, avatar: 'ava' })));
    state.onEvent('k', event('k-1', session({ credits_cost: 2, avatar: 'ava' })));
    state.onEvent('k', event('k-2', session({ end_reason: 'media_stalled', credits_cost: 1, avatar: 'ava' })));
    state.onEvent('k', event('k-3', session({ end_reason: 'credit_insufficient', credits_cost: 0.5 })));
    state.onEvent('k', event('k-4', { kind: 'spare', v: 1, at: '2026-11-24T10:00:00Z', status: 'failed', reason: 'insufficient_credits' }));
    const { counts, row } = state.counts()[0]!;
    assert.deepEqual(Object.fromEntries(counts.sessionsByEnd), { user_end: 1, media_stalled: 1, credit_insufficient: 1 });
    assert.deepEqual(Object.fromEntries(counts.errorsByCode), { media_stalled: 1, credit_insufficient: 1 });
    assert.equal(counts.mediaStalls, 1);
    assert.deepEqual(Object.fromEntries(counts.accountTroubleByReason), { credit_insufficient: 1, insufficient_credits: 1 });
    assert.equal(row.accountTrouble, 2);
    assert.deepEqual(state.spendRows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 2, credits: 3, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'unknown', sessions: 1, credits: 0.5, demo: false },
    ]);
  });

  it("the Spend view's demo calls are those that went live: a demo attempt cancelled while connecting is left out; a record that does not say is counted", () => {
    const state = new FleetState({ now: () => T0 });
    state.onEvent('k', event('k-1', session({ surface: 'demo', live_at: '2026-11-24T09:59:02Z', credits_cost: 3, avatar: 'ava' })));
    state.onEvent('k', event('k-2', session({ surface: 'demo', live_at: null, credits_cost: 0, avatar: 'ava' })));
    state.onEvent('k', event('k-3', session({ surface: 'demo', credits_cost: 2, avatar: 'ava' })));
    state.onEvent('k', event('k-4', session({ surface: 'direct', live_at: null, credits_cost: 0, avatar: 'ava' })));
    assert.deepEqual(state.spendRows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 0, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 2, credits: 5, demo: true },
    ]);
    assert.deepEqual(Object.fromEntries(state.counts()[0]!.counts.sessionsByEnd), { user_end: 4 }, 'every session still ended');
  });

  it('drops and counts what does not validate, never throws', () => {
    const state = new FleetState({ now: () => T0 });
    state.onStatus('k', 'not json', false);
    state.onStatus('k', JSON.stringify({ online: 'yes' }), false);
    state.onEvent('k', JSON.stringify({ record: {} }));
    assert.equal(state.onResult('k', JSON.stringify({ ok: 'maybe' })), null);
    assert.deepEqual(state.malformed, { status: 2, events: 1, results: 1 });
    assert.deepEqual(state.rows(), []);
  });

  it('keeps a screenshot as a picture to link to, and only the newest few', () => {
    const state = new FleetState({ now: () => T0 });
    const ask = (id: string) => state.commandSent({ id, cmd: 'screenshot', expected: new Set(['k']), expiresAtMs: T0 + 60_000 });
    ask('c-1');
    const answer = state.onResult('k', JSON.stringify({ id: 'c-1', cmd: 'screenshot', ok: true, result: { mime: 'image/png', width: 2, height: 3, png: PNG_1x1.toString('base64') }, at: 'x' }))!;
    assert.equal(answer.summary, 'screenshot 2×3');
    const name = answer.screenshotUrl!.match(/([0-9a-f]{32})\.png$/)![1]!;
    assert.deepEqual(state.screenshot(name)!.png, PNG_1x1);
    assert.ok(!JSON.stringify(state.rows()).includes(PNG_1x1.toString('base64')), 'the picture is not inlined in the rows');
    for (let i = 0; i < 40; i++) {
      ask(`c-${i + 2}`);
      state.onResult('k', JSON.stringify({ id: `c-${i + 2}`, cmd: 'screenshot', ok: true, result: { png: PNG_1x1.toString('base64') } }));
    }
    assert.equal(state.screenshot(name), null);
  });
});

describe('spendCsv', () => {
  it('quotes what needs quoting and defuses spreadsheet formulas', () => {
    assert.equal(
      spendCsv([{ kioskId: 'k', day: '2026-11-24', avatar: '=HYPERLINK("x")', sessions: 1, credits: 12, demo: true }]),
      'day,kiosk,avatar,sessions,credits,demo\r\n2026-11-24,k,"\'=HYPERLINK(""x"")",1,12,yes\r\n',
    );
  });
});

describe('spendCsv: every formula trigger a spreadsheet knows', () => {
  // OWASP's CSV-injection list, the same behind whitespace or control characters (spreadsheets skip them),
  // and the full-width forms some normalise: each cell starts with an apostrophe, so it stays text.
  const triggers = ['=1+1', '+1+1', '-1+1', '@SUM(A1)', '\t=1+1', '\r=1+1', '\n=1+1', ' =1+1', '  +1', '\u00a0=1', '\u3000=1', '\u200b=1', '\uff1d1+1', '\uff0b1', '\uff0d1', '\uff201', '\t', '\rx'];
  for (const avatar of triggers) {
    it(`defuses an avatar named ${JSON.stringify(avatar)}`, () => {
      const cell = spendCsv([{ kioskId: 'k', day: '2026-11-24', avatar, sessions: 1, credits: 1, demo: false }]).split('\r\n')[1]!.split(',')[2]!;
      assert.ok(cell.startsWith("'") || cell.startsWith(`"'`), cell);
    });
  }
  it('leaves a plain name and a number as they are', () => {
    assert.equal(spendCsv([{ kioskId: 'k-1', day: '2026-11-24', avatar: 'ava 2', sessions: 1, credits: -2, demo: false }]).split('\r\n')[1], '2026-11-24,k-1,ava 2,1,-2,no');
  });
});
