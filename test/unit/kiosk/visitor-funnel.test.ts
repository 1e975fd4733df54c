/**
 * The visitor funnel's counter (kiosk/visitor-funnel.ts): exact counts for exact event sequences, the
 * presence steps held to what a real attract screen produces, the report's hours and days. Injected clock,
 * the store in memory (its file is visitor-funnel-store.test.ts's).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KioskEvent } from '../../../electron/contract.ts';
import { emptyFunnelCounts, type FunnelCounts } from '../../../electron/core/funnel.ts';
import type { SessionState } from '../../../electron/core/session-types.ts';
import { NOTICED_MIN_GAP_MS, callLengthBucket, createVisitorFunnel, emptyVisitorReport, systemTimeZone } from '../../../electron/kiosk/visitor-funnel.ts';
import { openVisitorFunnelStore } from '../../../electron/kiosk/visitor-funnel-store.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { sessionSummary } from '../../helpers/metrics-source.ts';

// 2026-03-02 10:00 UTC, a Monday.
const T0 = Date.UTC(2026, 2, 2, 10, 0, 0);

function world(options: { presence?: boolean; timeZone?: string } = {}) {
  const clock = new FakeClock(T0);
  let presence = options.presence ?? true;
  const store = openVisitorFunnelStore({ timeZone: options.timeZone ?? 'UTC', clock });
  const funnel = createVisitorFunnel({ store, clock, presence: () => presence });
  const state = (s: SessionState): void => funnel.onEvent({ type: 'state', state: s, previous: 'idle' } as KioskEvent);
  return { clock, store, funnel, state, setPresence: (p: boolean) => (presence = p) };
}

const summary = (liveId: string, wentLive: boolean) => sessionSummary({ liveId, callMode: 'audio', wentLive });

const TAP = { callMode: 'audio', avatarId: 'kim', language: 'en' };

function expected(fill: (c: FunnelCounts) => void): FunnelCounts {
  const c = emptyFunnelCounts();
  fill(c);
  return c;
}

describe('the visitor funnel counts', () => {
  it('a conversation the visitor ended: tapped, live, ended well, its length, by language, mode and avatar', () => {
    const { clock, funnel, state } = world();
    funnel.tap(TAP);
    state({ phase: 'creating' });
    state({ phase: 'connecting', liveId: 'L1', attempt: 1 });
    clock.jump(2_000);
    state({ phase: 'live', liveId: 'L1', sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
    clock.jump(95_000);
    funnel.noteCause('visitor', 'L1');
    state({ phase: 'ending', liveId: 'L1', reason: 'user_end' });
    state({ phase: 'ended', liveId: 'L1', summary: summary('L1', true) });
    assert.deepEqual(
      funnel.today().counts,
      expected((c) => {
        c.tapped = 1;
        c.live = 1;
        c.endedWell = 1;
        c.callLength.from1to3m = 1;
        c.byLanguage = { en: { tapped: 1, live: 1 } };
        c.byCallMode = { audio: { tapped: 1, live: 1 } };
        c.byAvatar = { kim: { tapped: 1, live: 1 } };
      }),
    );
  });

  it('the idle hang-up after a conversation is ended well; media stalled, the operator, the venue limit and a server end are ended badly', () => {
    const { clock, funnel, state } = world();
    const call = (id: string, cause: string | null, end: 'ended' | 'failed') => {
      funnel.tap(TAP);
      state({ phase: 'connecting', liveId: id, attempt: 1 });
      state({ phase: 'live', liveId: id, sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
      clock.jump(30_000);
      if (cause) funnel.noteCause(cause, id);
      if (end === 'ended') state({ phase: 'ended', liveId: id, summary: summary(id, true) });
      else state({ phase: 'failed', liveId: id, error: { code: 'network', message: 'x' }, summary: summary(id, true) });
    };
    call('A', 'idle', 'ended');
    call('B', 'media_stalled', 'failed');
    call('C', 'operator', 'ended');
    call('D', 'max_call', 'ended');
    call('E', null, 'ended'); // the service ended it (live_duration)
    call('F', 'visitor', 'failed'); // the visitor's end, but the hang-up failed
    const c = funnel.today().counts;
    assert.deepEqual([c.tapped, c.live, c.endedWell, c.endedBadly, c.callLength.under1m], [6, 6, 1, 5, 6]);
  });

  it('the first cause counts, and a cause for another call is ignored', () => {
    const { clock, funnel, state } = world();
    funnel.tap(TAP);
    state({ phase: 'connecting', liveId: 'L1', attempt: 1 });
    state({ phase: 'live', liveId: 'L1', sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
    funnel.noteCause('visitor', 'OTHER');
    funnel.noteCause('max_call', 'L1');
    funnel.noteCause('visitor', 'L1');
    state({ phase: 'ended', liveId: 'L1', summary: summary('L1', true) });
    const c = funnel.today().counts;
    assert.deepEqual([c.endedWell, c.endedBadly], [0, 1]);
  });

  it('before live: the visitor cancelling is giving up, anything else is a failure', () => {
    const { funnel, state } = world();
    funnel.tap(TAP);
    state({ phase: 'connecting', liveId: 'L1', attempt: 1 });
    funnel.noteCause('visitor', 'L1');
    state({ phase: 'ended', liveId: 'L1', summary: summary('L1', false) });
    funnel.tap(TAP);
    state({ phase: 'creating' });
    state({ phase: 'failed', liveId: null, error: { code: 'network', message: 'no answer' }, summary: null });
    funnel.tap(TAP);
    state({ phase: 'warming', liveId: 'L3', notReadyRetries: 1, retryInMs: 1000, retryAtMs: 0 });
    state({ phase: 'failed', liveId: 'L3', error: { code: 'timeout', message: 'x' }, summary: summary('L3', false) });
    const c = funnel.today().counts;
    assert.deepEqual([c.tapped, c.gaveUp, c.failed, c.live, c.endedWell, c.endedBadly], [3, 1, 2, 0, 0, 0]);
    assert.deepEqual(c.byAvatar, { kim: { tapped: 3, live: 0 } });
  });

  it('a refused tap counts as tapped and as what refused it', () => {
    const { funnel } = world();
    funnel.refused('ageGate');
    funnel.refused('closed');
    funnel.refused('closed');
    funnel.refused('outOfOrder');
    const c = funnel.today().counts;
    assert.equal(c.tapped, 4);
    assert.deepEqual(c.refused, { ageGate: 1, closed: 2, outOfOrder: 1 });
  });

  it('states with no tap before them (a call the kiosk did not start for a visitor) are not counted', () => {
    const { clock, funnel, state } = world();
    state({ phase: 'live', liveId: 'X', sinceMs: clock.now(), endsAtMs: clock.now() + 1 });
    state({ phase: 'ended', liveId: 'X', summary: summary('X', true) });
    assert.deepEqual(funnel.today().counts, emptyFunnelCounts());
  });

  it('went live goes into the hour the avatar went live, the end into the hour it ended', () => {
    const { clock, funnel, state } = world();
    clock.jump(59 * 60_000); // 10:59
    funnel.tap(TAP);
    state({ phase: 'live', liveId: 'L', sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
    clock.jump(4 * 60_000); // 11:03
    funnel.noteCause('visitor', 'L');
    state({ phase: 'ended', liveId: 'L', summary: summary('L', true) });
    const hours = funnel.report().hours.map((h) => [h.hour, h.counts.tapped, h.counts.live, h.counts.endedWell, h.counts.callLength.from3to10m]);
    assert.deepEqual(hours, [
      ['2026-03-02T10', 1, 1, 0, 0],
      ['2026-03-02T11', 0, 0, 1, 1],
    ]);
  });

  it('live in the service\'s summary although its live state never came: counted live at the end, so live = ended well + badly', () => {
    const { clock, funnel, state } = world();
    funnel.tap(TAP);
    state({ phase: 'connecting', liveId: 'L1', attempt: 1 });
    clock.jump(5_000);
    funnel.noteCause('visitor', 'L1');
    state({ phase: 'ended', liveId: 'L1', summary: summary('L1', true) });
    const c = funnel.today().counts;
    assert.deepEqual([c.tapped, c.live, c.endedWell, c.gaveUp, c.callLength.under1m], [1, 1, 1, 0, 1]);
    assert.deepEqual(c.byAvatar, { kim: { tapped: 1, live: 1 } });
  });

  it('the call\'s id may come with its credentials; a cause naming that id counts, one naming no id counts too', () => {
    const { clock, funnel, state } = world();
    funnel.tap(TAP);
    funnel.onEvent({ type: 'credentials', liveId: 'C1' } as KioskEvent);
    state({ phase: 'live', liveId: null, sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 } as unknown as SessionState);
    funnel.noteCause('max_call', 'OTHER');
    funnel.noteCause('visitor', 'C1');
    state({ phase: 'ended', liveId: 'C1', summary: summary('C1', true) });
    funnel.tap(TAP);
    funnel.noteCause('idle', null);
    state({ phase: 'live', liveId: 'C2', sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
    state({ phase: 'ended', liveId: 'C2', summary: summary('C2', true) });
    const c = funnel.today().counts;
    assert.deepEqual([c.live, c.endedWell, c.endedBadly], [2, 2, 0]);
  });

  it('a live state told twice is one live; a cause with no call running is dropped', () => {
    const { clock, funnel, state } = world();
    funnel.noteCause('visitor', null);
    funnel.onEvent({ type: 'credentials', liveId: 'X' } as KioskEvent);
    funnel.tap(TAP);
    state({ phase: 'live', liveId: 'L', sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
    state({ phase: 'live', liveId: 'L', sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
    state({ phase: 'ended', liveId: 'L', summary: summary('L', true) });
    const c = funnel.today().counts;
    assert.deepEqual([c.tapped, c.live, c.endedWell, c.endedBadly], [1, 1, 0, 1]);
  });

  it('call lengths fall in their buckets at the edges (upper bounds exclusive)', () => {
    assert.deepEqual([0, 59.9, 60, 179.9, 180, 599.9, 600, 3600].map(callLengthBucket), ['under1m', 'under1m', 'from1to3m', 'from1to3m', 'from3to10m', 'from3to10m', 'over10m', 'over10m']);
  });
});

describe('the breakdowns by language, call mode and avatar', () => {
  it('a key that is not 1-64 letters, digits, ".", "_" or "-" is counted as other', () => {
    const { funnel } = world();
    for (const avatarId of ['kim.2_b-c', 'A'.repeat(64), 'A'.repeat(65), '', 'dr kim', 'kim/2', 'kïm', ' kim', 'kim ']) funnel.tap({ ...TAP, avatarId });
    assert.deepEqual(funnel.today().counts.byAvatar, {
      'kim.2_b-c': { tapped: 1, live: 0 },
      ['A'.repeat(64)]: { tapped: 1, live: 0 },
      other: { tapped: 7, live: 0 },
    });
  });

  it('keeps at most 63 keys: a new one after that is counted as other, the ones it has go on counting', () => {
    const { funnel, state } = world();
    for (let i = 0; i < 63; i++) funnel.tap({ ...TAP, avatarId: `a${i}` });
    funnel.tap({ ...TAP, avatarId: 'late' });
    funnel.tap({ ...TAP, avatarId: 'a0' });
    state({ phase: 'live', liveId: 'L1', sinceMs: T0, endsAtMs: T0 + 600_000 });
    const byAvatar = funnel.today().counts.byAvatar;
    assert.equal(Object.keys(byAvatar).length, 64);
    assert.deepEqual(byAvatar.other, { tapped: 1, live: 0 });
    assert.deepEqual(byAvatar.a0, { tapped: 2, live: 1 });
    assert.deepEqual(byAvatar.a62, { tapped: 1, live: 0 });
    assert.equal(byAvatar.late, undefined);
    // Once "other" is there it is one of the keys the breakdown has.
    funnel.tap({ ...TAP, avatarId: 'later' });
    assert.deepEqual(funnel.today().counts.byAvatar.other, { tapped: 2, live: 0 });
  });
});

describe('the presence steps from the page', () => {
  it('at most one noticed a second; one approached and one greeted per noticed', () => {
    const { clock, funnel } = world();
    const said: boolean[] = [];
    said.push(funnel.step('approached')); // nobody noticed yet
    said.push(funnel.step('noticed'));
    said.push(funnel.step('noticed')); // the same instant
    clock.jump(NOTICED_MIN_GAP_MS - 1);
    said.push(funnel.step('noticed')); // still within the second
    said.push(funnel.step('greeted'), funnel.step('greeted'));
    said.push(funnel.step('approached'), funnel.step('approached'));
    clock.jump(1);
    said.push(funnel.step('noticed'));
    said.push(funnel.step('approached'));
    assert.deepEqual(said, [false, true, false, false, true, false, true, false, true, true]);
    const c = funnel.today().counts;
    assert.deepEqual([c.noticed, c.approached, c.greeted], [2, 2, 1]);
  });

  it('a page hammering the channel gets at most one noticed a second counted', () => {
    const { clock, funnel } = world();
    for (let i = 0; i < 10_000; i++) {
      funnel.step('noticed');
      funnel.step('approached');
      funnel.step('greeted');
      clock.jump(1); // 10 000 calls over 10 s
    }
    const c = funnel.today().counts;
    assert.deepEqual([c.noticed, c.approached, c.greeted], [10, 10, 10]);
  });

  it('with presence detection off nothing is counted, and the report says so', () => {
    const { funnel, setPresence } = world({ presence: false });
    assert.deepEqual([funnel.step('noticed'), funnel.step('approached'), funnel.step('greeted')], [false, false, false]);
    assert.equal(funnel.today().counts.noticed, 0);
    assert.deepEqual(funnel.report().counting, { presence: false });
    setPresence(true);
    assert.deepEqual(funnel.report().counting, { presence: true });
  });
});

describe('the report', () => {
  it('hours of the last 7 local days oldest first, days up to today, today in the kiosk zone', () => {
    const { clock, funnel } = world({ timeZone: 'Europe/Berlin' });
    funnel.refused('closed'); // 2026-03-02 11:00 in Berlin
    clock.jump(13 * 3_600_000 + 30 * 60_000); // 23:30 UTC = 00:30 on the 3rd in Berlin
    funnel.refused('closed');
    clock.jump(8 * 24 * 3_600_000); // the 11th
    funnel.refused('ageGate');
    const r = funnel.report();
    assert.equal(r.timeZone, 'Europe/Berlin');
    assert.equal(r.threshold, 5);
    assert.equal(r.today.day, '2026-03-11');
    assert.deepEqual(r.hours.map((h) => h.hour), ['2026-03-11T00']);
    assert.deepEqual(r.days.map((d) => [d.day, d.counts.tapped]), [
      ['2026-03-02', 1],
      ['2026-03-03', 1],
      ['2026-03-11', 1],
    ]);
  });

  it('is a copy: changing it changes nothing counted', () => {
    const { funnel } = world();
    funnel.refused('closed');
    const r = funnel.report();
    r.today.counts.tapped = 99;
    r.hours[0]!.counts.tapped = 99;
    assert.equal(funnel.report().today.counts.tapped, 1);
    const since = funnel.sinceStart();
    since.tapped = 99;
    assert.equal(funnel.sinceStart().tapped, 1);
  });
});

describe('before any visitor', () => {
  it('the empty report: the day asked, nothing counted, no hours or days, the default threshold, whether presence counts', () => {
    assert.deepEqual(emptyVisitorReport('2026-03-02', 'Europe/Berlin', false), {
      timeZone: 'Europe/Berlin',
      threshold: 5,
      today: { day: '2026-03-02', counts: emptyFunnelCounts() },
      hours: [],
      days: [],
      counting: { presence: false },
    });
    assert.deepEqual(emptyVisitorReport('2026-03-02', 'UTC', true).counting, { presence: true });
  });

  it('the kiosk counts in the system\'s time zone', () => {
    const before = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Tokyo';
      assert.equal(systemTimeZone(), 'Asia/Tokyo');
      process.env.TZ = 'America/Chicago';
      assert.equal(systemTimeZone(), 'America/Chicago');
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});
