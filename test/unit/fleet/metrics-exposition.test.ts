/**
 * The kiosk's Prometheus figures (metrics.ts), event by event, read back as the exact exposition text: every
 * family's HELP and TYPE line, names, labels, values and bucket bounds. A scripted source (no service, no
 * HTTP), so each rule of the counting (a session counted once, its billing from the terminal summary, bounded
 * labels, the gauges refreshed at each scrape) is checked on its own. The endpoint that serves this text is
 * in metrics-server.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { register } from 'prom-client';
import type { CallFigures, HangupCause, LastCallQuality, SpareEvent } from '../../../electron/contract.ts';
import type { ErrorCode } from '../../../electron/core/errors.ts';
import type { SessionState } from '../../../electron/core/session-types.ts';
import { emptyFunnelCounts } from '../../../electron/core/funnel.ts';
import { createKioskMetrics, CALL_FIGURE_BUCKETS, METRIC_PREFIX, TIME_TO_LIVE_BUCKETS } from '../../../electron/fleet/metrics.ts';
import { scriptedMetricsSource, sessionSummary } from '../../helpers/metrics-source.ts';

/** The whole exposition of a new instance (version 1.0.0, nothing observed). */
const FRESH = `# HELP avatar_kiosk_sessions_started_total Sessions started (a create request was made).
# TYPE avatar_kiosk_sessions_started_total counter
avatar_kiosk_sessions_started_total 0

# HELP avatar_kiosk_sessions_ended_total Sessions ended, by outcome (ended, failed) and end reason (a spec hangup reason, an error code, or other).
# TYPE avatar_kiosk_sessions_ended_total counter

# HELP avatar_kiosk_sessions_live_total Sessions that went live (billing started).
# TYPE avatar_kiosk_sessions_live_total counter
avatar_kiosk_sessions_live_total 0

# HELP avatar_kiosk_time_to_live_seconds From the create request to live (seconds).
# TYPE avatar_kiosk_time_to_live_seconds histogram
avatar_kiosk_time_to_live_seconds_bucket{le="0.25"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="0.5"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="1"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="2"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="3"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="5"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="8"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="13"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="20"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="30"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="60"} 0
avatar_kiosk_time_to_live_seconds_bucket{le="+Inf"} 0
avatar_kiosk_time_to_live_seconds_sum 0
avatar_kiosk_time_to_live_seconds_count 0

# HELP avatar_kiosk_not_ready_retries_total NOT_READY answers waited out (avatar warming up).
# TYPE avatar_kiosk_not_ready_retries_total counter
avatar_kiosk_not_ready_retries_total 0

# HELP avatar_kiosk_reconnects_total Control-socket reconnects during live sessions.
# TYPE avatar_kiosk_reconnects_total counter
avatar_kiosk_reconnects_total 0

# HELP avatar_kiosk_credits_total Credits billed, from the final query of each session.
# TYPE avatar_kiosk_credits_total counter
avatar_kiosk_credits_total 0

# HELP avatar_kiosk_billed_seconds_total Billed seconds, from the final query of each session.
# TYPE avatar_kiosk_billed_seconds_total counter
avatar_kiosk_billed_seconds_total 0

# HELP avatar_kiosk_spares_total Pre-warmed (spare) sessions by status: created, used, expired, failed.
# TYPE avatar_kiosk_spares_total counter

# HELP avatar_kiosk_renderer_crashes_total Renderer processes gone, by Electron reason.
# TYPE avatar_kiosk_renderer_crashes_total counter

# HELP avatar_kiosk_app_restarts_total Launches of the app before this one (persisted across runs).
# TYPE avatar_kiosk_app_restarts_total counter
avatar_kiosk_app_restarts_total 0

# HELP avatar_kiosk_errors_total Errors by code (failed sessions and start-up problems).
# TYPE avatar_kiosk_errors_total counter

# HELP avatar_kiosk_info Always 1; labels say the version and the service mode.
# TYPE avatar_kiosk_info gauge
avatar_kiosk_info{version="1.0.0",mode="unknown"} 1

# HELP avatar_kiosk_media_stalled_total Live calls hung up by the media watchdog (the avatar's picture or voice stopped arriving for 20 s).
# TYPE avatar_kiosk_media_stalled_total counter
avatar_kiosk_media_stalled_total 0

# HELP avatar_kiosk_call_tap_to_rtc_ready_seconds From the tap to our RTC side ready (joined, microphone published), seconds. Labels: call mode, cloud proxy mode.
# TYPE avatar_kiosk_call_tap_to_rtc_ready_seconds histogram

# HELP avatar_kiosk_call_tap_to_conn_init_ack_seconds From the tap to the conn_init ack (live, billing starts), seconds. Labels: call mode, cloud proxy mode.
# TYPE avatar_kiosk_call_tap_to_conn_init_ack_seconds histogram

# HELP avatar_kiosk_call_tap_to_avatar_published_seconds From the tap to the avatar's user-published in the RTC channel, seconds. Labels: call mode, cloud proxy mode.
# TYPE avatar_kiosk_call_tap_to_avatar_published_seconds histogram

# HELP avatar_kiosk_call_tap_to_first_frame_seconds From the tap to the avatar's first decoded video frame (video calls), seconds. Labels: call mode, cloud proxy mode.
# TYPE avatar_kiosk_call_tap_to_first_frame_seconds histogram

# HELP avatar_kiosk_call_tap_to_first_audio_seconds From the tap to the avatar's first audio (voice-only calls), seconds. Labels: call mode, cloud proxy mode.
# TYPE avatar_kiosk_call_tap_to_first_audio_seconds histogram

# HELP avatar_kiosk_call_rtc_join_seconds The RTC channel join itself (client.join), seconds. Labels: call mode, cloud proxy mode.
# TYPE avatar_kiosk_call_rtc_join_seconds histogram

# HELP avatar_kiosk_audit_violations_total Calls the avatar service's content review ended (hang-up reason audit_violation).
# TYPE avatar_kiosk_audit_violations_total counter
avatar_kiosk_audit_violations_total 0

# HELP avatar_kiosk_age_gate_total Visitors at the age gate of an adult kiosk since start, by outcome (asked, confirmed, declined); only counts are kept.
# TYPE avatar_kiosk_age_gate_total counter

# HELP avatar_kiosk_visitor_funnel_total The visitor funnel since start, by step (noticed, approached, greeted, tapped, gaveUp, failed, live, endedWell, endedBadly); counts only.
# TYPE avatar_kiosk_visitor_funnel_total counter

# HELP avatar_kiosk_visitor_refusals_total Taps that created nothing since start, by what refused them (ageGate, closed, outOfOrder).
# TYPE avatar_kiosk_visitor_refusals_total counter

# HELP avatar_kiosk_visitor_call_length_total Conversations that went live since start, by length (under1m, from1to3m, from3to10m, over10m).
# TYPE avatar_kiosk_visitor_call_length_total counter

# HELP avatar_kiosk_safety_info Always 1: the audience the kiosk runs as, the moderation every create sends, its region, and whether an adult setting was refused.
# TYPE avatar_kiosk_safety_info gauge

# HELP avatar_kiosk_session_active 1 while a session is under way (creating to ending), else 0.
# TYPE avatar_kiosk_session_active gauge
avatar_kiosk_session_active 0

# HELP avatar_kiosk_last_call_bitrate_kbps The last call's received bitrate (kbps), as the renderer last reported it. Label: the quality level (good, fair, poor, down, unknown).
# TYPE avatar_kiosk_last_call_bitrate_kbps gauge

# HELP avatar_kiosk_last_call_packet_loss_ratio The last call's received packet loss (0 to 1). Label: the quality level (good, fair, poor, down, unknown).
# TYPE avatar_kiosk_last_call_packet_loss_ratio gauge

# HELP avatar_kiosk_last_call_frame_rate The last call's received avatar frame rate (fps; 0 in an audio call). Label: the quality level (good, fair, poor, down, unknown).
# TYPE avatar_kiosk_last_call_frame_rate gauge

# HELP avatar_kiosk_last_call_rtt_ms The last call's round trip to the RTC provider's edge (ms). Label: the quality level (good, fair, poor, down, unknown).
# TYPE avatar_kiosk_last_call_rtt_ms gauge
`;

/** The sample lines (no comments) of the families whose names start with `prefix`. */
async function lines(metrics: { render(): Promise<string> }, prefix: string): Promise<string[]> {
  const text = await metrics.render();
  return text.split('\n').filter((l) => l.startsWith(`avatar_kiosk_${prefix}`));
}

/** The billing counters' samples: NOT_READY retries, reconnects, credits, billed seconds. */
async function billing(metrics: { render(): Promise<string> }): Promise<string[]> {
  return [...(await lines(metrics, 'not_ready')), ...(await lines(metrics, 'reconnects')), ...(await lines(metrics, 'credits')), ...(await lines(metrics, 'billed'))];
}

/** A new instance (version 1) observing a scripted source. */
function observed() {
  const metrics = createKioskMetrics({ version: '1' });
  // The real service: its billing figures are counted (a demo call's are not, see below).
  const source = scriptedMetricsSource({ mode: 'direct' });
  metrics.observe(source);
  return { metrics, source };
}

const failed = (code: ErrorCode, summary: ReturnType<typeof sessionSummary> | null = null): SessionState => ({
  phase: 'failed',
  liveId: summary ? summary.liveId : null,
  error: { code, message: `failed with ${code}` },
  summary,
});
const ended = (summary = sessionSummary()): SessionState => ({ phase: 'ended', liveId: summary.liveId, summary });
const LIVE: SessionState = { phase: 'live', liveId: 'live-1', sinceMs: 0, endsAtMs: 300_000 };

describe('fleet metrics: the exposition', () => {
  it('a new instance exposes every family with its HELP and TYPE lines, its own registry, and nothing counted', async () => {
    const metrics = createKioskMetrics({ version: '1.0.0' });
    assert.equal(await metrics.render(), FRESH);
    assert.equal(METRIC_PREFIX, 'avatar_kiosk_');
    assert.deepEqual(TIME_TO_LIVE_BUCKETS, [0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60]);
    assert.deepEqual(CALL_FIGURE_BUCKETS, [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 13, 20, 30]);
    // Never the process-wide registry: a second instance does not collide, and the global one stays clean.
    assert.equal(register.getSingleMetric('avatar_kiosk_info'), undefined);
    assert.equal(await createKioskMetrics({ version: '1.0.0' }).render(), FRESH);
  });

  it('restarts: the launches before this one, whole and never negative', async () => {
    assert.deepEqual(await lines(createKioskMetrics({ version: '1', restarts: 5 }), 'app_restarts'), ['avatar_kiosk_app_restarts_total 5']);
    assert.deepEqual(await lines(createKioskMetrics({ version: '1', restarts: 2.7 }), 'app_restarts'), ['avatar_kiosk_app_restarts_total 2']);
    assert.deepEqual(await lines(createKioskMetrics({ version: '1', restarts: -3 }), 'app_restarts'), ['avatar_kiosk_app_restarts_total 0']);
  });
});

describe('fleet metrics: sessions', () => {
  it('a session that went live is counted once, at its terminal state, with the billing figures of its summary', async () => {
    const { metrics, source } = observed();
    source.enter({ phase: 'creating' });
    source.enter({ phase: 'connecting', liveId: 'live-1', attempt: 1 });
    source.enter({ phase: 'warming', liveId: 'live-1', notReadyRetries: 1, retryInMs: 2_000, retryAtMs: 2_000 });
    source.enter(LIVE);
    source.enter({ phase: 'reconnecting', liveId: 'live-1', attempt: 1, sinceMs: 0, endsAtMs: 300_000 });
    source.enter({ phase: 'ending', liveId: 'live-1', reason: 'timeout' });
    assert.deepEqual(await lines(metrics, 'sessions_'), ['avatar_kiosk_sessions_started_total 1', 'avatar_kiosk_sessions_live_total 0']);
    source.enter(ended(sessionSummary({ hangupReason: 'timeout', notReadyRetries: 2, reconnects: 3, creditsCost: 2.5, billedSeconds: 30 })));
    source.enter(ended(sessionSummary({ hangupReason: 'timeout', notReadyRetries: 2, reconnects: 3 }))); // a late repeat: not counted again
    assert.deepEqual(await lines(metrics, 'sessions_'), [
      'avatar_kiosk_sessions_started_total 1',
      'avatar_kiosk_sessions_ended_total{outcome="ended",end_reason="timeout"} 1',
      'avatar_kiosk_sessions_live_total 1',
    ]);
    assert.deepEqual(await lines(metrics, 'time_to_live'), [
      'avatar_kiosk_time_to_live_seconds_bucket{le="0.25"} 0',
      'avatar_kiosk_time_to_live_seconds_bucket{le="0.5"} 0',
      'avatar_kiosk_time_to_live_seconds_bucket{le="1"} 0',
      'avatar_kiosk_time_to_live_seconds_bucket{le="2"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="3"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="5"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="8"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="13"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="20"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="30"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="60"} 1',
      'avatar_kiosk_time_to_live_seconds_bucket{le="+Inf"} 1',
      'avatar_kiosk_time_to_live_seconds_sum 1.5',
      'avatar_kiosk_time_to_live_seconds_count 1',
    ]);
    assert.deepEqual(
      await billing(metrics),
      ['avatar_kiosk_not_ready_retries_total 2', 'avatar_kiosk_reconnects_total 3', 'avatar_kiosk_credits_total 2.5', 'avatar_kiosk_billed_seconds_total 30'],
    );
    assert.deepEqual(await lines(metrics, 'errors'), []);
    // A second session adds to the first.
    source.enter({ phase: 'creating' });
    source.enter(ended(sessionSummary({ timingsMs: { create: 0, socketOpen: 50, live: 250, ended: 9_000 }, creditsCost: 1, billedSeconds: 9, notReadyRetries: 0, reconnects: 0 })));
    assert.deepEqual(await lines(metrics, 'sessions_'), [
      'avatar_kiosk_sessions_started_total 2',
      'avatar_kiosk_sessions_ended_total{outcome="ended",end_reason="timeout"} 1',
      'avatar_kiosk_sessions_ended_total{outcome="ended",end_reason="user_end"} 1',
      'avatar_kiosk_sessions_live_total 2',
    ]);
    assert.deepEqual((await lines(metrics, 'time_to_live')).slice(0, 2), ['avatar_kiosk_time_to_live_seconds_bucket{le="0.25"} 1', 'avatar_kiosk_time_to_live_seconds_bucket{le="0.5"} 1']);
    assert.deepEqual((await lines(metrics, 'time_to_live')).slice(-2), ['avatar_kiosk_time_to_live_seconds_sum 1.75', 'avatar_kiosk_time_to_live_seconds_count 2']);
    assert.deepEqual(
      await billing(metrics),
      ['avatar_kiosk_not_ready_retries_total 2', 'avatar_kiosk_reconnects_total 3', 'avatar_kiosk_credits_total 3.5', 'avatar_kiosk_billed_seconds_total 39'],
    );
  });

  it('the end reason: a spec hangup reason, else other; a failure without one: its error code', async () => {
    const { metrics, source } = observed();
    const session = (terminal: SessionState) => {
      source.enter({ phase: 'creating' });
      source.enter(terminal);
    };
    session(ended(sessionSummary({ hangupReason: 'audit_violation' })));
    session(ended(sessionSummary({ hangupReason: 'something_new' as never })));
    session(ended(sessionSummary({ hangupReason: null })));
    session(failed('network'));
    session(failed('insufficient_credits', sessionSummary({ hangupReason: 'credit_insufficient', wentLive: false, creditsCost: null, billedSeconds: null })));
    session(failed('timeout', sessionSummary({ hangupReason: null, wentLive: false, creditsCost: 0, billedSeconds: 0 })));
    assert.deepEqual(await lines(metrics, 'sessions_'), [
      'avatar_kiosk_sessions_started_total 6',
      'avatar_kiosk_sessions_ended_total{outcome="ended",end_reason="audit_violation"} 1',
      'avatar_kiosk_sessions_ended_total{outcome="ended",end_reason="other"} 2',
      'avatar_kiosk_sessions_ended_total{outcome="failed",end_reason="network"} 1',
      'avatar_kiosk_sessions_ended_total{outcome="failed",end_reason="credit_insufficient"} 1',
      'avatar_kiosk_sessions_ended_total{outcome="failed",end_reason="timeout"} 1',
      'avatar_kiosk_sessions_live_total 3',
    ]);
    // Each failure is an error by its code; the last one is what /healthz says.
    assert.deepEqual(await lines(metrics, 'errors'), [
      'avatar_kiosk_errors_total{code="network"} 1',
      'avatar_kiosk_errors_total{code="insufficient_credits"} 1',
      'avatar_kiosk_errors_total{code="timeout"} 1',
    ]);
    assert.equal(metrics.health().lastErrorCode, 'timeout');
    // Nothing billed on the failures: no credits, no seconds.
    assert.deepEqual([...(await lines(metrics, 'credits')), ...(await lines(metrics, 'billed'))], ['avatar_kiosk_credits_total 7.5', 'avatar_kiosk_billed_seconds_total 90']);
  });

  it('a terminal state without a counted start, or an idle state, counts nothing', async () => {
    const metrics = createKioskMetrics({ version: '1.0.0' });
    const source = scriptedMetricsSource();
    metrics.observe(source);
    source.enter({ phase: 'idle' });
    source.enter(ended());
    source.enter(failed('network'));
    source.enter(LIVE);
    assert.equal(await metrics.render(), FRESH.replace('mode="unknown"', 'mode="demo"').replace('avatar_kiosk_session_active 0', 'avatar_kiosk_session_active 1'));
    assert.equal(metrics.health().lastErrorCode, null);
  });

  it('a call the content review ended is counted once in its own series; the age gate\'s counts and the audience are read at each scrape', async () => {
    const { metrics, source } = observed();
    let counts = { asked: 3, confirmed: 1, declined: 1 };
    Object.assign(source, {
      safety: { audience: 'adult', moderation: 'disabled', region: 'DE', refusal: null },
      ageGateCounts: () => counts,
    });
    source.enter({ phase: 'creating' });
    source.enter(ended(sessionSummary({ hangupReason: 'audit_violation' })));
    source.enter(ended(sessionSummary({ hangupReason: 'audit_violation' }))); // the same end told again
    source.enter({ phase: 'creating' });
    source.enter(ended(sessionSummary({ hangupReason: 'user_end' })));
    assert.deepEqual(await lines(metrics, 'audit_violations'), ['avatar_kiosk_audit_violations_total 1']);
    assert.deepEqual(await lines(metrics, 'age_gate'), [
      'avatar_kiosk_age_gate_total{outcome="asked"} 3',
      'avatar_kiosk_age_gate_total{outcome="confirmed"} 1',
      'avatar_kiosk_age_gate_total{outcome="declined"} 1',
    ]);
    counts = { asked: 4, confirmed: 2, declined: 1 };
    assert.deepEqual(await lines(metrics, 'age_gate'), [
      'avatar_kiosk_age_gate_total{outcome="asked"} 4',
      'avatar_kiosk_age_gate_total{outcome="confirmed"} 2',
      'avatar_kiosk_age_gate_total{outcome="declined"} 1',
    ]);
    assert.deepEqual(await lines(metrics, 'safety_info'), ['avatar_kiosk_safety_info{audience="adult",moderation="disabled",region="DE",adult_refused="false"} 1']);
  });

  it('the visitor funnel\'s counts are read at each scrape: one series per step, refusal kind and call-length bucket', async () => {
    const { metrics, source } = observed();
    const counts = emptyFunnelCounts();
    Object.assign(counts, { noticed: 9, approached: 4, greeted: 9, tapped: 6, gaveUp: 1, live: 3, endedWell: 2, endedBadly: 1 });
    counts.refused.closed = 2;
    counts.callLength.over10m = 3;
    counts.byLanguage = { de: { tapped: 4, live: 3 } }; // breakdowns stay on the kiosk: no series of their own
    Object.assign(source, { visitorCounts: () => counts });
    assert.deepEqual(await lines(metrics, 'visitor_funnel'), [
      'avatar_kiosk_visitor_funnel_total{step="noticed"} 9',
      'avatar_kiosk_visitor_funnel_total{step="approached"} 4',
      'avatar_kiosk_visitor_funnel_total{step="greeted"} 9',
      'avatar_kiosk_visitor_funnel_total{step="tapped"} 6',
      'avatar_kiosk_visitor_funnel_total{step="gaveUp"} 1',
      'avatar_kiosk_visitor_funnel_total{step="failed"} 0',
      'avatar_kiosk_visitor_funnel_total{step="live"} 3',
      'avatar_kiosk_visitor_funnel_total{step="endedWell"} 2',
      'avatar_kiosk_visitor_funnel_total{step="endedBadly"} 1',
    ]);
    counts.refused.ageGate = 1;
    assert.deepEqual(await lines(metrics, 'visitor_refusals'), [
      'avatar_kiosk_visitor_refusals_total{kind="ageGate"} 1',
      'avatar_kiosk_visitor_refusals_total{kind="closed"} 2',
      'avatar_kiosk_visitor_refusals_total{kind="outOfOrder"} 0',
    ]);
    assert.deepEqual(await lines(metrics, 'visitor_call_length'), [
      'avatar_kiosk_visitor_call_length_total{bucket="under1m"} 0',
      'avatar_kiosk_visitor_call_length_total{bucket="from1to3m"} 0',
      'avatar_kiosk_visitor_call_length_total{bucket="from3to10m"} 0',
      'avatar_kiosk_visitor_call_length_total{bucket="over10m"} 3',
    ]);
    assert.doesNotMatch(await metrics.render(), /byLanguage|de"/);
  });

  it('a summary without a live time, or not live, is not observed; figures that are not positive are not added', async () => {
    const { metrics, source } = observed();
    source.enter({ phase: 'creating' });
    // Went live, but the live time was never reached (timing lost): counted live, not observed.
    source.enter(ended(sessionSummary({ timingsMs: { create: 0, socketOpen: null, live: null, ended: 1 } })));
    source.enter({ phase: 'creating' });
    // Not live, yet a live time (a stale figure): neither counted live nor observed. Negative figures
    // (never sent by a sane server) are ignored rather than thrown at the counters.
    source.enter(ended(sessionSummary({ wentLive: false, notReadyRetries: -1, reconnects: -2, creditsCost: -4, billedSeconds: -5 })));
    assert.deepEqual(await lines(metrics, 'sessions_live'), ['avatar_kiosk_sessions_live_total 1']);
    assert.deepEqual((await lines(metrics, 'time_to_live')).slice(-2), ['avatar_kiosk_time_to_live_seconds_sum 0', 'avatar_kiosk_time_to_live_seconds_count 0']);
    assert.deepEqual(
      await billing(metrics),
      ['avatar_kiosk_not_ready_retries_total 0', 'avatar_kiosk_reconnects_total 0', 'avatar_kiosk_credits_total 2.5', 'avatar_kiosk_billed_seconds_total 30'],
    );
  });

  it('session_active is 1 from creating to ending and 0 when idle, ended or failed (read at each scrape)', async () => {
    const metrics = createKioskMetrics({ version: '1' });
    assert.deepEqual(await lines(metrics, 'session_active'), ['avatar_kiosk_session_active 0']);
    const source = scriptedMetricsSource();
    metrics.observe(source);
    const states: SessionState[] = [
      { phase: 'idle' },
      { phase: 'creating' },
      { phase: 'connecting', liveId: 'live-1', attempt: 1 },
      { phase: 'warming', liveId: 'live-1', notReadyRetries: 1, retryInMs: 2_000, retryAtMs: 2_000 },
      LIVE,
      { phase: 'reconnecting', liveId: 'live-1', attempt: 1, sinceMs: 0, endsAtMs: 300_000 },
      { phase: 'ending', liveId: 'live-1', reason: 'user_end' },
      ended(),
      failed('network'),
    ];
    const seen: string[] = [];
    for (const state of states) {
      source.state = state; // no event: the gauge reads the source's state when scraped
      seen.push(`${state.phase} ${(await lines(metrics, 'session_active'))[0]}`);
    }
    assert.deepEqual(seen, [
      'idle avatar_kiosk_session_active 0',
      'creating avatar_kiosk_session_active 1',
      'connecting avatar_kiosk_session_active 1',
      'warming avatar_kiosk_session_active 1',
      'live avatar_kiosk_session_active 1',
      'reconnecting avatar_kiosk_session_active 1',
      'ending avatar_kiosk_session_active 1',
      'ended avatar_kiosk_session_active 0',
      'failed avatar_kiosk_session_active 0',
    ]);
  });
});

describe('fleet metrics: other events', () => {
  it('call figures: one histogram per figure, labelled by call mode and proxy, in seconds; a null figure is not observed', async () => {
    const { metrics, source } = observed();
    const figures: CallFigures = {
      liveId: 'live-secret-1',
      callMode: 'video',
      tapToRtcReadyMs: 400,
      tapToConnInitAckMs: 900,
      tapToAvatarPublishedMs: 1_200,
      tapToFirstFrameMs: 2_500,
      tapToFirstAudioMs: null,
      joinMs: 80,
      proxy: 'udp',
      endReason: 'user_end',
    };
    source.emit({ type: 'call-figures', figures });
    source.emit({ type: 'call-figures', figures: { ...figures, callMode: 'audio', proxy: 'off', tapToFirstFrameMs: null, tapToFirstAudioMs: 31_000 } });
    // Every figure's sum and count, family by family (first-frame only for video, first-audio only for audio).
    assert.deepEqual((await lines(metrics, 'call_')).filter((l) => !l.includes('_bucket')), [
      'avatar_kiosk_call_tap_to_rtc_ready_seconds_sum{call_mode="video",proxy="udp"} 0.4',
      'avatar_kiosk_call_tap_to_rtc_ready_seconds_count{call_mode="video",proxy="udp"} 1',
      'avatar_kiosk_call_tap_to_rtc_ready_seconds_sum{call_mode="audio",proxy="off"} 0.4',
      'avatar_kiosk_call_tap_to_rtc_ready_seconds_count{call_mode="audio",proxy="off"} 1',
      'avatar_kiosk_call_tap_to_conn_init_ack_seconds_sum{call_mode="video",proxy="udp"} 0.9',
      'avatar_kiosk_call_tap_to_conn_init_ack_seconds_count{call_mode="video",proxy="udp"} 1',
      'avatar_kiosk_call_tap_to_conn_init_ack_seconds_sum{call_mode="audio",proxy="off"} 0.9',
      'avatar_kiosk_call_tap_to_conn_init_ack_seconds_count{call_mode="audio",proxy="off"} 1',
      'avatar_kiosk_call_tap_to_avatar_published_seconds_sum{call_mode="video",proxy="udp"} 1.2',
      'avatar_kiosk_call_tap_to_avatar_published_seconds_count{call_mode="video",proxy="udp"} 1',
      'avatar_kiosk_call_tap_to_avatar_published_seconds_sum{call_mode="audio",proxy="off"} 1.2',
      'avatar_kiosk_call_tap_to_avatar_published_seconds_count{call_mode="audio",proxy="off"} 1',
      'avatar_kiosk_call_tap_to_first_frame_seconds_sum{call_mode="video",proxy="udp"} 2.5',
      'avatar_kiosk_call_tap_to_first_frame_seconds_count{call_mode="video",proxy="udp"} 1',
      'avatar_kiosk_call_tap_to_first_audio_seconds_sum{call_mode="audio",proxy="off"} 31',
      'avatar_kiosk_call_tap_to_first_audio_seconds_count{call_mode="audio",proxy="off"} 1',
      'avatar_kiosk_call_rtc_join_seconds_sum{call_mode="video",proxy="udp"} 0.08',
      'avatar_kiosk_call_rtc_join_seconds_count{call_mode="video",proxy="udp"} 1',
      'avatar_kiosk_call_rtc_join_seconds_sum{call_mode="audio",proxy="off"} 0.08',
      'avatar_kiosk_call_rtc_join_seconds_count{call_mode="audio",proxy="off"} 1',
    ]);
    // The buckets: the call-figure bounds, cumulative; 31 s is past the last bound.
    assert.deepEqual(
      (await lines(metrics, 'call_tap_to_first_audio')).filter((l) => l.includes('_bucket')),
      [...CALL_FIGURE_BUCKETS.map((le) => `avatar_kiosk_call_tap_to_first_audio_seconds_bucket{le="${le}",call_mode="audio",proxy="off"} 0`), 'avatar_kiosk_call_tap_to_first_audio_seconds_bucket{le="+Inf",call_mode="audio",proxy="off"} 1'],
    );
    assert.deepEqual(
      (await lines(metrics, 'call_tap_to_first_frame')).filter((l) => l.includes('_bucket')).map((l) => l.replace(',call_mode="video",proxy="udp"', '')),
      [
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="0.1"} 0',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="0.25"} 0',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="0.5"} 0',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="0.75"} 0',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="1"} 0',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="1.5"} 0',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="2"} 0',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="3"} 1',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="5"} 1',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="8"} 1',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="13"} 1',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="20"} 1',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="30"} 1',
        'avatar_kiosk_call_tap_to_first_frame_seconds_bucket{le="+Inf"} 1',
      ],
    );
    assert.ok(!(await metrics.render()).includes('live-secret-1'), 'no live_id in the exposition');
  });

  it('spares by status; a status outside the four is other', async () => {
    const { metrics, source } = observed();
    const spare = (status: string) => source.emit({ type: 'spare', status: status as SpareEvent['status'], liveId: 'live-spare', callMode: 'audio' });
    for (const status of ['created', 'used', 'created', 'expired', 'failed', 'recycled', 'created']) spare(status);
    const counted = [
      'avatar_kiosk_spares_total{status="created"} 3',
      'avatar_kiosk_spares_total{status="used"} 1',
      'avatar_kiosk_spares_total{status="expired"} 1',
      'avatar_kiosk_spares_total{status="failed"} 1',
      'avatar_kiosk_spares_total{status="other"} 1',
    ];
    assert.deepEqual(await lines(metrics, 'spares'), counted);
    // Other events change nothing.
    source.emit({ type: 'muted', muted: true });
    source.emit({ type: 'config-changed' });
    assert.deepEqual(await lines(metrics, 'spares'), counted);
  });

  it('renderer crashes by Electron reason; an unknown reason is other', async () => {
    const metrics = createKioskMetrics({ version: '1' });
    for (const reason of ['clean-exit', 'abnormal-exit', 'killed', 'crashed', 'oom', 'launch-failed', 'integrity-failure', 'crashed', 'memory-eviction']) metrics.rendererGone(reason);
    assert.deepEqual(await lines(metrics, 'renderer_crashes'), [
      'avatar_kiosk_renderer_crashes_total{reason="clean-exit"} 1',
      'avatar_kiosk_renderer_crashes_total{reason="abnormal-exit"} 1',
      'avatar_kiosk_renderer_crashes_total{reason="killed"} 1',
      'avatar_kiosk_renderer_crashes_total{reason="crashed"} 2',
      'avatar_kiosk_renderer_crashes_total{reason="oom"} 1',
      'avatar_kiosk_renderer_crashes_total{reason="launch-failed"} 1',
      'avatar_kiosk_renderer_crashes_total{reason="integrity-failure"} 1',
      'avatar_kiosk_renderer_crashes_total{reason="other"} 1',
    ]);
  });

  it('errors outside a session by code; a code outside ERROR_CODES is internal', async () => {
    const metrics = createKioskMetrics({ version: '1' });
    metrics.recordError('invalid_config');
    metrics.recordError('invalid_config');
    assert.equal(metrics.health().lastErrorCode, 'invalid_config');
    metrics.recordError('made_up' as ErrorCode);
    assert.deepEqual(await lines(metrics, 'errors'), ['avatar_kiosk_errors_total{code="invalid_config"} 2', 'avatar_kiosk_errors_total{code="internal"} 1']);
    assert.equal(metrics.health().lastErrorCode, 'internal');
  });

  it('hangups by the media watchdog are counted; other causes are not; a source without causes is fine', async () => {
    const { metrics, source } = observed();
    for (const cause of ['visitor', 'media_stalled', 'idle', 'operator', 'media_stalled'] as HangupCause[]) source.cause(cause);
    assert.deepEqual(await lines(metrics, 'media_stalled'), ['avatar_kiosk_media_stalled_total 2']);

    const plain = scriptedMetricsSource({ withCauses: false });
    const off = metrics.observe(plain);
    assert.deepEqual(plain.listening(), { events: 1, causes: 0 });
    off();
    assert.deepEqual(plain.listening(), { events: 0, causes: 0 });
  });

  it('after unsubscribing, neither events nor hangup causes are counted', async () => {
    const metrics = createKioskMetrics({ version: '1' });
    const source = scriptedMetricsSource();
    const off = metrics.observe(source);
    assert.deepEqual(source.listening(), { events: 1, causes: 1 });
    off();
    assert.deepEqual(source.listening(), { events: 0, causes: 0 });
    source.enter({ phase: 'creating' });
    source.cause('media_stalled');
    assert.deepEqual([...(await lines(metrics, 'sessions_started')), ...(await lines(metrics, 'media_stalled'))], [
      'avatar_kiosk_sessions_started_total 0',
      'avatar_kiosk_media_stalled_total 0',
    ]);
  });
});

describe('fleet metrics: gauges read at each scrape, and health', () => {
  it('info: version and the source mode now, one sample only; unknown before a source', async () => {
    const metrics = createKioskMetrics({ version: '3.1.4' });
    assert.deepEqual(await lines(metrics, 'info'), ['avatar_kiosk_info{version="3.1.4",mode="unknown"} 1']);
    const source = scriptedMetricsSource({ mode: 'demo' });
    metrics.observe(source);
    assert.deepEqual(await lines(metrics, 'info'), ['avatar_kiosk_info{version="3.1.4",mode="demo"} 1']);
    source.mode = 'direct';
    assert.deepEqual(await lines(metrics, 'info'), ['avatar_kiosk_info{version="3.1.4",mode="direct"} 1']);
  });

  it("the last call's figures: absent without a report, exported by quality level, gone again when the source has none", async () => {
    const { metrics, source } = observed();
    assert.deepEqual(await lines(metrics, 'last_call'), []);
    const quality: LastCallQuality = { bitrateKbps: 980, packetLossPct: 2.5, frameRate: 24, rttMs: 48, level: 'fair', atMs: 1, final: true };
    source.lastCallQuality = quality;
    assert.deepEqual(await lines(metrics, 'last_call'), [
      'avatar_kiosk_last_call_bitrate_kbps{level="fair"} 980',
      'avatar_kiosk_last_call_packet_loss_ratio{level="fair"} 0.025',
      'avatar_kiosk_last_call_frame_rate{level="fair"} 24',
      'avatar_kiosk_last_call_rtt_ms{level="fair"} 48',
    ]);
    // A new level replaces the old sample rather than adding one.
    source.lastCallQuality = { ...quality, level: 'down', bitrateKbps: 0, packetLossPct: 100, frameRate: 0, rttMs: 900 };
    assert.deepEqual(await lines(metrics, 'last_call'), [
      'avatar_kiosk_last_call_bitrate_kbps{level="down"} 0',
      'avatar_kiosk_last_call_packet_loss_ratio{level="down"} 1',
      'avatar_kiosk_last_call_frame_rate{level="down"} 0',
      'avatar_kiosk_last_call_rtt_ms{level="down"} 900',
    ]);
    source.lastCallQuality = null;
    assert.deepEqual(await lines(metrics, 'last_call'), []);
  });

  it('health: the source mode and phase, the last error code and the version; defaults before a source', () => {
    const metrics = createKioskMetrics({ version: '2.0.1' });
    assert.deepEqual(metrics.health(), { up: true, mode: 'unknown', sessionPhase: 'idle', lastErrorCode: null, version: '2.0.1' });
    const source = scriptedMetricsSource({ mode: 'gateway', state: LIVE });
    metrics.observe(source);
    assert.deepEqual(metrics.health(), { up: true, mode: 'gateway', sessionPhase: 'live', lastErrorCode: null, version: '2.0.1' });
    source.enter({ phase: 'creating' });
    source.enter(failed('server'));
    assert.deepEqual(metrics.health(), { up: true, mode: 'gateway', sessionPhase: 'failed', lastErrorCode: 'server', version: '2.0.1' });
  });
});
