/**
 * The fleet console's state from the payloads kiosks publish (the kiosk link's own status and event
 * shapes): every field a status carries lands in the row, and what it leaves out reads as unknown;
 * since-times on the console's clock, when they move and when they do not; rows in the order kiosks were
 * heard of, and a group's members; payloads as raw MQTT bytes, and malformed ones dropped and counted;
 * events counted once (how long an event id is remembered), which call is "the last call" when events
 * arrive late, twice or with a broken time, account trouble told apart; command answers of every kind,
 * their listeners and the screenshots kept; spend rows in order, and a spend CSV that a spreadsheet cannot
 * turn into a formula.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SCREENSHOT_BYTES } from '../../../../electron/fleet/command-table.ts';
import { END_AHEAD_MS, END_BEHIND_MS } from '../../../../electron/fleet/console/intake.ts';
import { FleetState, KEPT_SCREENSHOT_BYTES, KEPT_SCREENSHOTS, spendCsv } from '../../../../electron/fleet/console/state.ts';
import type { AnswerView, KioskRow } from '../../../../electron/fleet/console/view.ts';
import type { FleetStatus } from '../../../../electron/fleet/mqtt-link.ts';
import type { SessionRecord } from '../../../../electron/operations/ledger.ts';
import { eventPayload, offlineStatus, onlineStatus, PNG_1x1, resultPayload, T0 } from '../../../helpers/fleet-payloads.ts';
import { session } from '../../../helpers/ledger-records.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** A session record ending at T0 with only the fields these tests read (no live_at: it does not say whether the call went live). */
const bareSession = (extra: Record<string, unknown>) => ({ kind: 'session', v: 1, start_at: '2026-11-24T09:59:00Z', end_at: '2026-11-24T10:00:00Z', end_reason: 'user_end', credits_cost: 2, ...extra });

/** A FleetState on a clock the test moves by hand. */
function fleet(startMs = T0) {
  const clock = { ms: startMs };
  const state = new FleetState({ now: () => clock.ms });
  const countsOf = (kioskId: string) => state.counts().find((c) => c.row.kioskId === kioskId)!.counts;
  return { clock, state, countsOf };
}

/** The row of a kiosk the console has heard nothing from but `over`. */
const blankRow = (kioskId: string, over: Partial<KioskRow> = {}): KioskRow => ({
  kioskId, online: false, sinceAt: null, sinceNotBefore: null, offlineReason: null, group: null, phase: null, open: null, version: null, mode: null, update: null,
  todaySessions: 0, todayCredits: 0, todayDemoSessions: 0, lastCallAt: null, lastCallEnd: null, lastErrorCode: null, droppedEvents: 0, queued: 0, policyError: null, accountTrouble: 0, avatarVolume: null, safety: null, auditViolations: 0, lastAnswer: null, refused: 0, service: null,
  ...over,
});

describe('FleetState: a kiosk\'s status', () => {
  it('stamps online and offline with the console\'s clock; a stored offline status has no known time', () => {
    let now = T0;
    const state = new FleetState({ now: () => now });
    state.onStatus('gone', JSON.stringify({ online: false, kioskId: 'gone', reason: 'connection lost' }), true);
    assert.equal(state.row('gone')!.sinceAt, null);
    assert.equal(state.row('gone')!.offlineReason, 'connection lost');
    state.onStatus('k', onlineStatus(), true);
    assert.equal(state.row('k')!.sinceAt, null, 'online before the console started: when is not known');
    state.onStatus('k', JSON.stringify({ online: false, kioskId: 'k', reason: 'stopped' }), false);
    state.onStatus('k', onlineStatus(), false);
    assert.equal(state.row('k')!.sinceAt, new Date(T0).toISOString());
    now += 60_000;
    state.onStatus('k', onlineStatus({ phase: 'live' }), false);
    state.onStatus('k', onlineStatus({ phase: 'live' }), true);
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

  it('remembers when the console started, on its own clock', () => {
    assert.equal(fleet(T0 + 5).state.startedAtMs, T0 + 5);
  });

  it('puts every field of an online status in the row; an offline one without a reason says "offline" and keeps the rest', () => {
    const { clock, state } = fleet();
    state.onStatus('k', onlineStatus({
      group: 'lobby', phase: 'live', open: true, version: '1.4.2', mode: 'gateway', today: { sessions: 4, credits: 12.5 }, lastErrorCode: 'media_stalled',
      queued: 2, droppedEvents: 5, policyError: 'hours: bad time "25:00"', update: { phase: 'off', ready: null, pinned: null, off: 'no update feed configured' },
      service: { status: 'unreachable', message: 'The service at api.example.com does not answer.', action: 'Check the network.' },
    }), false);
    const online = blankRow('k', {
      online: true, sinceAt: iso(T0), group: 'lobby', phase: 'live', open: true, version: '1.4.2', mode: 'gateway', update: 'off',
      todaySessions: 4, todayCredits: 12.5, lastErrorCode: 'media_stalled', queued: 2, droppedEvents: 5, policyError: 'hours: bad time "25:00"',
      service: { status: 'unreachable', message: 'The service at api.example.com does not answer.', action: 'Check the network.' },
    });
    assert.deepEqual(state.row('k'), online);
    clock.ms += 1_000;
    state.onStatus('k', offlineStatus(), false);
    assert.deepEqual(state.row('k'), { ...online, online: false, sinceAt: iso(T0 + 1_000), offlineReason: 'offline' });
    assert.equal(state.malformed.status, 0);
  });

  it('reads what an online status leaves out as unknown or zero, and keeps the last error code it knew', () => {
    const { state } = fleet();
    state.onEvent('k', eventPayload('k-1', session(T0, { end_reason: 'sip_closed' })));
    state.onStatus('k', JSON.stringify({ online: true }), false);
    assert.deepEqual(state.row('k'), blankRow('k', {
      online: true, sinceAt: iso(T0), lastCallAt: iso(T0), lastCallEnd: 'sip_closed', lastErrorCode: 'sip_closed',
    }));
    state.onStatus('k', onlineStatus({ lastErrorCode: null }), false);
    assert.equal(state.row('k')!.lastErrorCode, 'sip_closed', 'a status without an error code does not forget the last one');
    state.onStatus('k', onlineStatus({ lastErrorCode: 'mic_denied' }), false);
    assert.equal(state.row('k')!.lastErrorCode, 'mic_denied');
  });

  it('drops a status whose update or today figures are not whole', () => {
    const { state } = fleet();
    state.onStatus('k', onlineStatus({ update: { ready: '1.5.0' } }), false);
    state.onStatus('k', onlineStatus({ today: { sessions: 3 } }), false);
    assert.equal(state.malformed.status, 2);
    assert.equal(state.row('k'), null);
  });

  it('stamps a last will that is the first word from a kiosk with the console\'s time', () => {
    const { state } = fleet();
    state.onStatus('k', offlineStatus('connection lost'), false);
    assert.deepEqual(state.row('k'), blankRow('k', { sinceAt: iso(T0), offlineReason: 'connection lost' }));
  });

  it('moves the since-time only when online changes: not for a live status after a stored one, nor for a second status of the same kind', () => {
    const { clock, state } = fleet();
    // Online statuses without a phase (a kiosk's first status before its session machine starts).
    state.onStatus('a', JSON.stringify({ online: true }), true);
    clock.ms += 1_000;
    state.onStatus('a', JSON.stringify({ online: true }), false);
    assert.equal(state.row('a')!.sinceAt, null, 'online before the console started, still');

    state.onStatus('b', JSON.stringify({ online: true }), false);
    clock.ms += 1_000;
    state.onStatus('b', JSON.stringify({ online: true }), false);
    assert.equal(state.row('b')!.sinceAt, iso(T0 + 1_000));

    state.onStatus('c', offlineStatus('connection lost'), true);
    clock.ms += 1_000;
    state.onStatus('c', offlineStatus('stopped'), false);
    assert.deepEqual({ since: state.row('c')!.sinceAt, reason: state.row('c')!.offlineReason }, { since: null, reason: 'stopped' });
  });
});

describe('FleetState: payloads as they arrive', () => {
  it('reads a status, an event and an answer delivered as raw MQTT bytes', () => {
    const { state, countsOf } = fleet();
    state.onStatus('k', Buffer.from(onlineStatus({ version: '1.4.2' })), false);
    state.onEvent('k', Buffer.from(eventPayload('k-1', session(T0))));
    state.commandSent({ id: 'c-1', cmd: 'reload', expected: new Set(['k']), expiresAtMs: T0 + 120_000 });
    const answer = state.onResult('k', Buffer.from(resultPayload({ ok: false })));
    assert.equal(state.row('k')!.version, '1.4.2');
    assert.equal(countsOf('k').sessionsByEnd.get('user_end'), 1);
    assert.equal(answer!.summary, 'refused');
    assert.deepEqual(state.malformed, { status: 0, events: 0, results: 0 });
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
});

describe('FleetState: rows and members', () => {
  it('lists kiosks in the order it first heard of them; one it never heard of has no row', () => {
    const { state } = fleet();
    state.onEvent('b', eventPayload('b-1', session(T0)));
    state.onStatus('a', onlineStatus(), true);
    assert.deepEqual(state.rows().map((r) => [r.kioskId, r.online]), [['b', false], ['a', true]]);
    assert.equal(state.row('nobody'), null);
  });

  it('finds a group\'s members by their last status, and the whole fleet', () => {
    const { state } = fleet();
    state.onStatus('l1', onlineStatus({ group: 'lobby' }), true);
    state.onStatus('c1', onlineStatus({ group: 'cafe' }), true);
    state.onStatus('l2', onlineStatus({ group: 'lobby' }), true);
    state.onStatus('n', onlineStatus({ group: null }), true);
    assert.deepEqual(state.members({ group: 'lobby' }), ['l1', 'l2']);
    assert.deepEqual(state.members({ group: 'nowhere' }), []);
    assert.deepEqual(state.members({ fleet: true }), ['l1', 'c1', 'l2', 'n']);
  });
});

describe('FleetState: ledger events', () => {
  it("an operator's end-call (the kiosk's end reason 'operator') is a normal end, not an error", () => {
    const state = new FleetState({ now: () => T0 });
    state.onStatus('k', onlineStatus(), false);
    const record: SessionRecord = {
      kind: 'session', v: 1, start_at: '2026-11-24T09:59:00Z', live_at: '2026-11-24T09:59:02Z', end_at: '2026-11-24T10:00:00Z', live_id: 'l1', surface: 'direct',
      call_mode: 'video', time_to_live_ms: 2000, not_ready_retries: 0, reconnects: 0, end_reason: 'operator', ended_by: 'client', billed_seconds: 58, credits_cost: 87, recovered: false,
    };
    state.onEvent('k', eventPayload('k-op', record));
    assert.equal(state.row('k')!.lastErrorCode, null);
    assert.equal(state.counts().find((c) => c.row.kioskId === 'k')!.counts.errorsByCode.size, 0);
  });

  it('counts an event once however often QoS 1 delivers it; tells errors, stalls and account trouble apart', () => {
    const state = new FleetState({ now: () => T0 });
    state.onEvent('k', eventPayload('k-1', bareSession({ credits_cost: 2, avatar: 'ava' })));
    state.onEvent('k', eventPayload('k-1', bareSession({ credits_cost: 2, avatar: 'ava' })));
    state.onEvent('k', eventPayload('k-2', bareSession({ end_reason: 'media_stalled', credits_cost: 1, avatar: 'ava' })));
    state.onEvent('k', eventPayload('k-3', bareSession({ end_reason: 'credit_insufficient', credits_cost: 0.5 })));
    state.onEvent('k', eventPayload('k-4', { kind: 'spare', v: 1, at: '2026-11-24T10:00:00Z', status: 'failed', reason: 'insufficient_credits' }));
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
    state.onEvent('k', eventPayload('k-1', bareSession({ surface: 'demo', live_at: '2026-11-24T09:59:02Z', credits_cost: 3, avatar: 'ava' })));
    state.onEvent('k', eventPayload('k-2', bareSession({ surface: 'demo', live_at: null, credits_cost: 0, avatar: 'ava' })));
    state.onEvent('k', eventPayload('k-3', bareSession({ surface: 'demo', credits_cost: 2, avatar: 'ava' })));
    state.onEvent('k', eventPayload('k-4', bareSession({ surface: 'direct', live_at: null, credits_cost: 0, avatar: 'ava' })));
    assert.deepEqual(state.spendRows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 0, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 2, credits: 5, demo: true },
    ]);
    assert.deepEqual(Object.fromEntries(state.counts()[0]!.counts.sessionsByEnd), { user_end: 4 }, 'every session still ended');
  });

  it('remembers the last 256 event ids: a repeat within them is dropped, an older one counts again', () => {
    const { state, countsOf } = fleet();
    for (let i = 0; i < 256; i++) state.onEvent('k', eventPayload(`e${i}`, session(T0)));
    state.onEvent('k', eventPayload('e0', session(T0)));
    assert.equal(countsOf('k').sessionsByEnd.get('user_end'), 256, 'e0 is one of the last 256');
    state.onEvent('k', eventPayload('e256', session(T0)));
    state.onEvent('k', eventPayload('e0', session(T0)));
    assert.equal(countsOf('k').sessionsByEnd.get('user_end'), 258, 'e0 was pushed out by e256');
  });

  it('keeps the latest call end as the last call whatever order the events come in; an equal time takes the newer event', () => {
    const { state } = fleet();
    const last = () => ({ at: state.row('k')!.lastCallAt, end: state.row('k')!.lastCallEnd });
    state.onEvent('k', eventPayload('k-2', session(T0, { end_reason: 'idle' })));
    assert.deepEqual(last(), { at: iso(T0), end: 'idle' });
    state.onEvent('k', eventPayload('k-1', session(T0 - 60_000, { end_reason: 'max_call' })));
    assert.deepEqual(last(), { at: iso(T0), end: 'idle' }, 'an older call arriving late');
    state.onEvent('k', eventPayload('k-3', session(T0, { end_reason: 'closing' })));
    assert.deepEqual(last(), { at: iso(T0), end: 'closing' });
    state.onEvent('k', eventPayload('k-4', session(T0 + 1, { end_reason: 'opening_hours' })));
    assert.deepEqual(last(), { at: iso(T0 + 1), end: 'opening_hours' });
  });

  it('refuses a call that ends outside its window around the console\'s clock, or at a time that does not parse: no count, no last call, no spend row', () => {
    const { state } = fleet();
    state.onEvent('k', eventPayload('k-0', session(T0)));
    state.takeChanged();
    const ends = [iso(-60_000), iso(T0 - END_BEHIND_MS - 1), iso(T0 + END_AHEAD_MS + 1), 'yesterday'];
    ends.forEach((end, i) => state.onEvent('k', eventPayload(`k-${i + 1}`, { ...session(T0, { avatar: 'ava' }), end_at: end })));
    assert.deepEqual(state.refusals.entries(), [{ topic: 'events', reason: 'bad_time', count: 4 }]);
    assert.deepEqual(state.spendRows().map((r) => r.sessions), [1]);
    assert.equal(state.row('k')!.lastCallAt, iso(T0));
    assert.equal(state.row('k')!.refused, 4);
    // Its window's edges are inside it.
    state.onEvent('k', eventPayload('k-5', session(T0 + END_AHEAD_MS)));
    state.onEvent('k', eventPayload('k-6', session(T0 - END_BEHIND_MS)));
    assert.equal(state.row('k')!.lastCallAt, iso(T0 + END_AHEAD_MS));
    assert.equal(state.refusals.count('events'), 4);
  });

  it('counts no error for the planned ends (idle, max_call, operator, closing, opening_hours, user_end)', () => {
    const { state, countsOf } = fleet();
    ['user_end', 'idle', 'max_call', 'operator', 'closing', 'opening_hours'].forEach((end, i) => state.onEvent('k', eventPayload(`k-${i}`, session(T0 + i, { end_reason: end }))));
    assert.equal(countsOf('k').errorsByCode.size, 0);
    assert.equal(state.row('k')!.lastErrorCode, null);
  });

  it('counts the error code over the end reason, and an empty balance named only by the error code as account trouble', () => {
    const { state, countsOf } = fleet();
    state.onEvent('k', eventPayload('k-1', session(T0, { end_reason: 'external', error_code: 'credit_insufficient' })));
    const c = countsOf('k');
    assert.deepEqual(Object.fromEntries(c.errorsByCode), { credit_insufficient: 1 });
    assert.deepEqual(Object.fromEntries(c.accountTroubleByReason), { credit_insufficient: 1 });
    assert.deepEqual({ error: state.row('k')!.lastErrorCode, trouble: state.row('k')!.accountTrouble }, { error: 'credit_insufficient', trouble: 1 });
  });

  it('counts a call whose cost is unknown as a call that cost nothing', () => {
    const { state, countsOf } = fleet();
    state.onEvent('k', eventPayload('k-1', session(T0, { credits_cost: 'unknown', avatar: 'ava' })));
    assert.equal(state.malformed.events, 0);
    assert.deepEqual(Object.fromEntries(countsOf('k').creditsByAvatar), { ava: 0 });
    assert.deepEqual(state.spendRows(), [{ kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 0, demo: false }]);
  });

  it('counts as account trouble only a failed spare whose reason names the balance', () => {
    const { state, countsOf } = fleet();
    const spare = (status: string, reason?: string) => ({ kind: 'spare', v: 1, at: iso(T0), live_id: null, surface: 'direct', call_mode: 'video', status, ...(reason === undefined ? {} : { reason }) });
    state.onEvent('k', eventPayload('s-1', spare('failed')));
    state.onEvent('k', eventPayload('s-2', spare('failed', 'create: 503 Service Unavailable')));
    state.onEvent('k', eventPayload('s-3', spare('expired', 'insufficient_credits')));
    assert.equal(state.row('k')!.accountTrouble, 0);
    assert.equal(countsOf('k').accountTroubleByReason.size, 0);
    assert.deepEqual(state.takeChanged(), [], 'nothing on the row changed');
    state.onEvent('k', eventPayload('s-4', spare('failed', 'create: 402 insufficient_credits')));
    assert.deepEqual(Object.fromEntries(countsOf('k').accountTroubleByReason), { insufficient_credits: 1 });
    assert.equal(state.row('k')!.accountTrouble, 1);
    assert.equal(state.malformed.events, 0);
  });

  it('counts a record of a kind it does not know as malformed', () => {
    const { state } = fleet();
    state.onEvent('k', eventPayload('x-1', { kind: 'reboot', v: 1, at: iso(T0) }));
    assert.equal(state.malformed.events, 1);
  });

  it('orders spend rows by day, then kiosk, then avatar', () => {
    const { state } = fleet();
    const DAY = 86_400_000;
    state.onEvent('a', eventPayload('a-1', session(T0 + DAY, { avatar: 'x', credits_cost: 1 })));
    state.onEvent('b', eventPayload('b-1', session(T0, { avatar: 'x', credits_cost: 2 })));
    state.onEvent('a', eventPayload('a-2', session(T0, { avatar: 'y', credits_cost: 3 })));
    state.onEvent('a', eventPayload('a-3', session(T0, { avatar: 'x', credits_cost: 4 })));
    assert.deepEqual(state.spendRows().map((r) => `${r.day} ${r.kioskId} ${r.avatar} ${r.credits}`), [
      '2026-11-24 a x 4',
      '2026-11-24 a y 3',
      '2026-11-24 b x 2',
      '2026-11-25 a x 1',
    ]);
  });
});

describe('FleetState: command answers', () => {
  /** The console sent `cmd` as `id` to `kiosks` (as its link records it before publishing). */
  const ask = (state: FleetState, cmd = 'reload', id = 'c-1', kiosks = ['k']) => state.commandSent({ id, cmd, expected: new Set(kiosks), expiresAtMs: T0 + 120_000 });

  it('sums up a plain result as its JSON, cut at 200 characters', () => {
    const { state } = fleet();
    ask(state);
    const result = { applied: true, note: 'n'.repeat(300) };
    const answer = state.onResult('k', resultPayload({ ok: true, result }));
    assert.deepEqual(answer, { id: 'c-1', cmd: 'reload', ok: true, summary: JSON.stringify(result).slice(0, 200), screenshotUrl: null, at: iso(T0) });
    assert.equal(answer!.summary.length, 200);
    assert.deepEqual(state.row('k')!.lastAnswer, answer);
  });

  it('sums up a refusal as its code and message, or "refused" when it gives none; a refusal that names no command is still its answer', () => {
    const { state } = fleet();
    ask(state);
    const refused = state.onResult('k', resultPayload({ ok: false, error: { code: 'expired', message: 'command expired' } }));
    assert.equal(refused!.summary, 'expired: command expired');
    const bare = state.onResult('k', resultPayload({ cmd: null, ok: false }));
    assert.deepEqual(bare, { id: 'c-1', cmd: 'reload', ok: false, summary: 'refused', screenshotUrl: null, at: iso(T0) });
  });

  it('tells each listener every answer with its kiosk, until it stops listening', () => {
    const { state } = fleet();
    ask(state);
    const heard: Array<[string, AnswerView]> = [];
    const stop = state.onAnswer((answer, kioskId) => heard.push([kioskId, answer]));
    const first = state.onResult('k', resultPayload({ ok: true, result: {} }));
    assert.deepEqual(heard, [['k', first]]);
    assert.equal(first!.summary, '{}');
    stop();
    state.onResult('k', resultPayload({ ok: true }));
    assert.equal(heard.length, 1);
  });

  it(`keeps exactly the newest ${KEPT_SCREENSHOTS} screenshots`, () => {
    const { state } = fleet();
    const names = Array.from({ length: KEPT_SCREENSHOTS + 1 }, (_, i) => {
      ask(state, 'screenshot', `s-${i}`);
      return /([0-9a-f]{32})\.png$/.exec(state.onResult('k', resultPayload({ id: `s-${i}`, cmd: 'screenshot', ok: true, result: { png: PNG_1x1.toString('base64'), width: 1, height: 1 } }))!.screenshotUrl!)![1]!;
    });
    assert.equal(new Set(names).size, names.length, 'each under a random name of its own');
    assert.equal(state.screenshot(names[0]!), null);
    assert.deepEqual(state.screenshot(names[1]!), { png: PNG_1x1, kioskId: 'k' });
    assert.notEqual(state.screenshot(names[KEPT_SCREENSHOTS]!), null);
  });

  it(`keeps at most ${KEPT_SCREENSHOT_BYTES / 1024 / 1024} MB of screenshots: the oldest go first`, () => {
    const { state } = fleet();
    // 8 MB pictures (the most a kiosk sends): 8 of them fill the budget, a 9th pushes the first out.
    const big = Buffer.concat([PNG_1x1, Buffer.alloc(MAX_SCREENSHOT_BYTES - PNG_1x1.length)]);
    const names: string[] = [];
    for (let i = 0; i < 9; i++) {
      ask(state, 'screenshot', `s-${i}`);
      const url = state.onResult('k', resultPayload({ id: `s-${i}`, cmd: 'screenshot', ok: true, result: { png: big.toString('base64'), width: 1, height: 1 } }))!.screenshotUrl!;
      names.push(/([0-9a-f]{32})\.png$/.exec(url)![1]!);
    }
    assert.equal(state.screenshot(names[0]!), null);
    assert.equal(state.screenshot(names[1]!)?.png.length, MAX_SCREENSHOT_BYTES);
    assert.equal(state.screenshot(names[8]!)?.png.length, MAX_SCREENSHOT_BYTES);
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

  it('writes a negative figure as a number, not as a defused formula', () => {
    assert.equal(spendCsv([{ kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: -2, demo: false }]), 'day,kiosk,avatar,sessions,credits,demo\r\n2026-11-24,k,ava,1,-2,no\r\n');
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
