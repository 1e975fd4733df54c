/**
 * The console's fleet-wide /metrics (electron/fleet/console/metrics.ts), read as Prometheus would read it:
 * every series with its kiosk, a figure the kiosk did not report left out rather than shown as 0, the
 * kiosk's own start as the status change it saw before the console, and each scrape built afresh from
 * the state (a series that no longer applies disappears; counters are not added up twice).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyFunnelCounts } from '../../../../electron/core/funnel.ts';
import { createConsoleMetrics } from '../../../../electron/fleet/console/metrics.ts';
import { FleetState } from '../../../../electron/fleet/console/state.ts';

const STARTED = Date.parse('2026-11-24T09:00:00Z');
const T0 = Date.parse('2026-11-24T10:00:00Z');

const status = (kioskId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ online: true, kioskId, group: 'lobby', version: '1.2.3', mode: 'direct', phase: 'idle', open: true, today: { sessions: 3, credits: 7.5 }, queued: 4, droppedEvents: 2, policyError: null, ...extra });
const call = (id: string, record: Record<string, unknown>) => JSON.stringify({ id, record: { kind: 'session', credits_cost: 2, avatar: 'ava', ...record } });

/** Kiosk a in a call since before the console started, b closed with a refused policy, c gone; a took two calls. */
function fleet() {
  let now = STARTED;
  const state = new FleetState({ now: () => now });
  // Kiosk a counted its visitors today: 12 noticed, 6 tapped, 3 live (under the threshold: no series).
  const counts = { ...emptyFunnelCounts(), noticed: 12, tapped: 6, live: 3, endedWell: 3 };
  state.onStatus('a', status('a', { phase: 'live', visitors: { day: '2026-11-24', counts } }), true);
  now = T0;
  state.onStatus(
    'b',
    status('b', {
      open: false,
      group: null,
      policyError: 'refused',
      today: { sessions: 1, credits: 0.5 },
      queued: 9,
      droppedEvents: 0,
      safety: { audience: 'public', moderation: 'strict', region: 'FR', refusal: 'Audience "adult" is not allowed in region FR.', ageGate: { asked: 0, confirmed: 0, declined: 0 }, auditViolations: 2 },
    }),
    false,
  );
  state.onStatus('c', JSON.stringify({ online: false, kioskId: 'c', reason: 'gone' }), true);
  state.onEvent('a', call('e1', { end_at: '2026-11-24T09:59:00Z', end_reason: 'media_stalled' }));
  state.onEvent('a', call('e2', { end_at: '2026-11-24T09:58:00Z', end_reason: 'user_end', credits_cost: 1.5, error_code: 'credit_insufficient' }));
  return { state, setNow: (ms: number) => void (now = ms) };
}

/** The samples of one series family, without its HELP and TYPE lines. */
const samples = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`avatar_fleet_${name}{`) || l.startsWith(`avatar_fleet_${name} `));

describe('console metrics', () => {
  it('exports every figure of every kiosk, each with its help and type', async () => {
    const metrics = createConsoleMetrics(fleet().state, () => true);
    assert.equal(
      await metrics.render(),
      `# HELP avatar_fleet_broker_connected 1 while the console is connected to the fleet broker.
# TYPE avatar_fleet_broker_connected gauge
avatar_fleet_broker_connected 1

# HELP avatar_fleet_kiosk_online 1 while the kiosk is connected to the broker (its retained status), 0 after its last will.
# TYPE avatar_fleet_kiosk_online gauge
avatar_fleet_kiosk_online{kiosk="a"} 1
avatar_fleet_kiosk_online{kiosk="b"} 1
avatar_fleet_kiosk_online{kiosk="c"} 0

# HELP avatar_fleet_kiosk_open 1 inside opening hours (or none set), 0 while closed; absent while offline.
# TYPE avatar_fleet_kiosk_open gauge
avatar_fleet_kiosk_open{kiosk="a"} 1
avatar_fleet_kiosk_open{kiosk="b"} 0

# HELP avatar_fleet_kiosk_in_call 1 while the kiosk is in a call (phase live).
# TYPE avatar_fleet_kiosk_in_call gauge
avatar_fleet_kiosk_in_call{kiosk="a"} 1
avatar_fleet_kiosk_in_call{kiosk="b"} 0

# HELP avatar_fleet_kiosk_today_sessions Today's sessions as the kiosk reports them in its status.
# TYPE avatar_fleet_kiosk_today_sessions gauge
avatar_fleet_kiosk_today_sessions{kiosk="a"} 3
avatar_fleet_kiosk_today_sessions{kiosk="b"} 1
avatar_fleet_kiosk_today_sessions{kiosk="c"} 0

# HELP avatar_fleet_kiosk_today_credits Today's credits as the kiosk reports them in its status.
# TYPE avatar_fleet_kiosk_today_credits gauge
avatar_fleet_kiosk_today_credits{kiosk="a"} 7.5
avatar_fleet_kiosk_today_credits{kiosk="b"} 0.5
avatar_fleet_kiosk_today_credits{kiosk="c"} 0

# HELP avatar_fleet_kiosk_queued_events Events waiting on the kiosk's disk for the broker; absent at 0.
# TYPE avatar_fleet_kiosk_queued_events gauge
avatar_fleet_kiosk_queued_events{kiosk="a"} 4
avatar_fleet_kiosk_queued_events{kiosk="b"} 9

# HELP avatar_fleet_kiosk_dropped_events Events the kiosk dropped from its full queue (its status); absent at 0.
# TYPE avatar_fleet_kiosk_dropped_events gauge
avatar_fleet_kiosk_dropped_events{kiosk="a"} 2

# HELP avatar_fleet_kiosk_policy_error 1 while the kiosk reports a refused policy block; absent otherwise.
# TYPE avatar_fleet_kiosk_policy_error gauge
avatar_fleet_kiosk_policy_error{kiosk="b"} 1

# HELP avatar_fleet_kiosk_last_call_timestamp_seconds End of the kiosk's last call the console received (the kiosk's clock).
# TYPE avatar_fleet_kiosk_last_call_timestamp_seconds gauge
avatar_fleet_kiosk_last_call_timestamp_seconds{kiosk="a"} 1795514340

# HELP avatar_fleet_kiosk_status_change_timestamp_seconds When the console saw the kiosk go online or offline (the console's clock); its own start when the change came before it.
# TYPE avatar_fleet_kiosk_status_change_timestamp_seconds gauge
avatar_fleet_kiosk_status_change_timestamp_seconds{kiosk="a"} 1795510800
avatar_fleet_kiosk_status_change_timestamp_seconds{kiosk="b"} 1795514400
avatar_fleet_kiosk_status_change_timestamp_seconds{kiosk="c"} 1795510800

# HELP avatar_fleet_kiosk_info Always 1: the kiosk's version, group and mode as labels.
# TYPE avatar_fleet_kiosk_info gauge
avatar_fleet_kiosk_info{kiosk="a",version="1.2.3",group="lobby",mode="direct"} 1
avatar_fleet_kiosk_info{kiosk="b",version="1.2.3",group="",mode="direct"} 1
avatar_fleet_kiosk_info{kiosk="c",version="",group="",mode=""} 1

# HELP avatar_fleet_sessions_total Calls ended, from the kiosks' ledger events, by end reason (a kiosk's 9th and later reasons: other).
# TYPE avatar_fleet_sessions_total counter
avatar_fleet_sessions_total{kiosk="a",end_reason="media_stalled"} 1
avatar_fleet_sessions_total{kiosk="a",end_reason="user_end"} 1

# HELP avatar_fleet_session_errors_total Calls that failed or ended on an error, by error code (a kiosk's 9th and later codes: other).
# TYPE avatar_fleet_session_errors_total counter
avatar_fleet_session_errors_total{kiosk="a",code="media_stalled"} 1
avatar_fleet_session_errors_total{kiosk="a",code="credit_insufficient"} 1

# HELP avatar_fleet_credits_total Credits billed, from the ledger events, by avatar (a kiosk's 9th and later avatars: other).
# TYPE avatar_fleet_credits_total counter
avatar_fleet_credits_total{kiosk="a",avatar="ava"} 3.5

# HELP avatar_fleet_account_trouble_total The service refused for the account's balance (create refused, credit_insufficient hang-up).
# TYPE avatar_fleet_account_trouble_total counter
avatar_fleet_account_trouble_total{kiosk="a",reason="credit_insufficient"} 1

# HELP avatar_fleet_kiosk_refused_payloads_total Messages from the kiosk the console refused (figures out of bounds, answers to nothing it asked); absent at 0.
# TYPE avatar_fleet_kiosk_refused_payloads_total counter

# HELP avatar_fleet_audit_violations_total Calls the avatar service's content review ended (audit_violation), as each kiosk's status counts them since its start.
# TYPE avatar_fleet_audit_violations_total counter
avatar_fleet_audit_violations_total{kiosk="a"} 0
avatar_fleet_audit_violations_total{kiosk="b"} 2
avatar_fleet_audit_violations_total{kiosk="c"} 0

# HELP avatar_fleet_kiosk_public 1 while the kiosk runs as public (moderation strict on every create), 0 as adult; absent when it does not say.
# TYPE avatar_fleet_kiosk_public gauge
avatar_fleet_kiosk_public{kiosk="b"} 1

# HELP avatar_fleet_media_stalls_total Calls hung up by the media watchdog (end reason media_stalled).
# TYPE avatar_fleet_media_stalls_total counter
avatar_fleet_media_stalls_total{kiosk="a"} 1
avatar_fleet_media_stalls_total{kiosk="b"} 0
avatar_fleet_media_stalls_total{kiosk="c"} 0

# HELP avatar_fleet_kiosks Kiosks the console knows (each has sent a status or an event).
# TYPE avatar_fleet_kiosks gauge
avatar_fleet_kiosks 3

# HELP avatar_fleet_kiosks_offline Kiosks whose last word was offline (a last will or a clean stop).
# TYPE avatar_fleet_kiosks_offline gauge
avatar_fleet_kiosks_offline 1

# HELP avatar_fleet_group_kiosks Kiosks per group (their status' group; "" for none).
# TYPE avatar_fleet_group_kiosks gauge
avatar_fleet_group_kiosks{group="lobby"} 1
avatar_fleet_group_kiosks{group=""} 2

# HELP avatar_fleet_group_kiosks_offline Offline kiosks per group.
# TYPE avatar_fleet_group_kiosks_offline gauge
avatar_fleet_group_kiosks_offline{group="lobby"} 0
avatar_fleet_group_kiosks_offline{group=""} 1

# HELP avatar_fleet_refused_payloads_total Messages from kiosks the console refused, by topic (status, events, results) and reason (malformed, negative, not_finite, too_large, bad_time, unsolicited, not_png).
# TYPE avatar_fleet_refused_payloads_total counter

# HELP avatar_fleet_label_values_folded_total Calls counted under label value "other" because their kiosk had already used its 8 values of that label (end_reason, code, avatar).
# TYPE avatar_fleet_label_values_folded_total counter

# HELP avatar_fleet_broker_messages_dropped_total Messages the broker dropped for any client since it started, from its $SYS/broker/publish/messages/dropped (a queue or in-flight limit reached); absent until the broker said.
# TYPE avatar_fleet_broker_messages_dropped_total counter

# HELP avatar_fleet_last_message_timestamp_seconds The last message the console received from the broker (any topic: the broker's own $SYS comes every 10 s), on the console's clock; absent until the first.
# TYPE avatar_fleet_last_message_timestamp_seconds gauge

# HELP avatar_fleet_broker_session_problems_total The console's broker session: taken over (another connection under its client id) or lost (the broker no longer had it).
# TYPE avatar_fleet_broker_session_problems_total counter

# HELP avatar_fleet_kiosk_visitors The kiosk's visitor funnel of the day the fleet reports, by step; absent while under the threshold (5).
# TYPE avatar_fleet_kiosk_visitors gauge
avatar_fleet_kiosk_visitors{kiosk="a",step="noticed"} 12
avatar_fleet_kiosk_visitors{kiosk="a",step="tapped"} 6

# HELP avatar_fleet_visitors The fleet's visitor funnel of the day, by step: the kiosks' counts at or above the threshold, added up.
# TYPE avatar_fleet_visitors gauge
avatar_fleet_visitors{step="noticed"} 12
avatar_fleet_visitors{step="approached"} 0
avatar_fleet_visitors{step="greeted"} 0
avatar_fleet_visitors{step="tapped"} 6
avatar_fleet_visitors{step="refused"} 0
avatar_fleet_visitors{step="gave_up"} 0
avatar_fleet_visitors{step="failed"} 0
avatar_fleet_visitors{step="live"} 0
avatar_fleet_visitors{step="ended_well"} 0
avatar_fleet_visitors{step="ended_badly"} 0

# HELP avatar_fleet_scrape_errors_total Metric families left out of a scrape because building them failed, by family.
# TYPE avatar_fleet_scrape_errors_total counter
`,
    );
  });

  it('builds each scrape afresh: the same figures twice, a dropped series gone, the broker link as it is now', async () => {
    const { state, setNow } = fleet();
    let connected = true;
    const metrics = createConsoleMetrics(state, () => connected);
    const first = await metrics.render();
    assert.equal(await metrics.render(), first, 'counters are not added up again on each scrape');
    connected = false;
    setNow(T0 + 5_000);
    state.onStatus('b', JSON.stringify({ online: false, kioskId: 'b', reason: 'connection lost' }), false);
    state.onEvent('a', call('e3', { end_at: '2026-11-24T10:01:00Z', end_reason: 'media_stalled', credits_cost: 'unknown' }));
    const { open: _open, ...withoutHours } = JSON.parse(status('b')) as Record<string, unknown>;
    state.onStatus('d', JSON.stringify({ ...withoutHours, kioskId: 'd' }), false);
    const second = await metrics.render();
    assert.deepEqual(samples(second, 'broker_connected'), ['avatar_fleet_broker_connected 0']);
    assert.deepEqual(samples(second, 'kiosk_open'), ['avatar_fleet_kiosk_open{kiosk="a"} 1'], 'no opening state for a kiosk gone offline, nor for one that does not report it');
    assert.deepEqual(samples(second, 'kiosk_in_call'), ['avatar_fleet_kiosk_in_call{kiosk="a"} 1', 'avatar_fleet_kiosk_in_call{kiosk="d"} 0']);
    assert.deepEqual(samples(second, 'kiosk_status_change_timestamp_seconds')[1], 'avatar_fleet_kiosk_status_change_timestamp_seconds{kiosk="b"} 1795514405');
    assert.deepEqual(samples(second, 'kiosk_last_call_timestamp_seconds'), ['avatar_fleet_kiosk_last_call_timestamp_seconds{kiosk="a"} 1795514460']);
    assert.deepEqual(samples(second, 'sessions_total'), ['avatar_fleet_sessions_total{kiosk="a",end_reason="media_stalled"} 2', 'avatar_fleet_sessions_total{kiosk="a",end_reason="user_end"} 1']);
    assert.deepEqual(samples(second, 'media_stalls_total'), ['avatar_fleet_media_stalls_total{kiosk="a"} 2', 'avatar_fleet_media_stalls_total{kiosk="b"} 0', 'avatar_fleet_media_stalls_total{kiosk="c"} 0', 'avatar_fleet_media_stalls_total{kiosk="d"} 0']);
  });
});
