/**
 * A kiosk the console must not trust: one whose broker login is all that stands behind what it publishes.
 * Each test plays an attack the security review ran against the console's state and its `/metrics`
 * (numbers that made prom-client throw, a flood of invented label values, answers to commands nobody
 * sent) through the same entry points the broker link feeds, and checks that the fleet's figures stay
 * whole and bounded and the refusal is counted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createConsoleMetrics } from '../../../../electron/fleet/console/metrics.ts';
import { FleetState } from '../../../../electron/fleet/console/state.ts';
import { eventPayload, onlineStatus, PNG_1x1, resultPayload, T0 } from '../../../helpers/fleet-payloads.ts';
import { session } from '../../../helpers/ledger-records.ts';

const fleet = () => new FleetState({ now: () => T0 });
/** The series lines of a scrape (no HELP, TYPE or blank lines). */
const series = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
const sample = (text: string, line: string) => series(text).filter((l) => l.startsWith(line));

describe('an untrusted kiosk: figures the console refuses', () => {
  it('refuses a call with credits_cost -1 and keeps /metrics whole: spend never goes below zero', async () => {
    const state = fleet();
    const metrics = createConsoleMetrics(state, () => true);
    state.onEvent('k', eventPayload('e-1', session(T0, { credits_cost: 2, avatar: 'ava' })));
    state.onEvent('k', eventPayload('e-2', session(T0, { credits_cost: -1, avatar: 'ava' })));
    const text = await metrics.render();
    assert.deepEqual(sample(text, 'avatar_fleet_credits_total{'), ['avatar_fleet_credits_total{kiosk="k",avatar="ava"} 2']);
    assert.deepEqual(state.spendRows().map((r) => [r.sessions, r.credits]), [[1, 2]]);
    assert.deepEqual(sample(text, 'avatar_fleet_refused_payloads_total{'), ['avatar_fleet_refused_payloads_total{topic="events",reason="negative"} 1']);
  });

  it('refuses absurd credits (two of 1e308 overflow to Infinity) and a JSON 1e999 (Infinity): spend stays a number', async () => {
    const state = fleet();
    const metrics = createConsoleMetrics(state, () => true);
    state.onStatus('k', onlineStatus(), false);
    state.onEvent('k', eventPayload('e-1', session(T0, { credits_cost: 1e308, avatar: 'ava' })));
    state.onEvent('k', eventPayload('e-2', session(T0, { credits_cost: 1e308, avatar: 'ava' })));
    state.onEvent('k', eventPayload('e-3', session(T0, { credits_cost: 3, avatar: 'ava' })).replace('"credits_cost":3', '"credits_cost":1e999'));
    const text = await metrics.render();
    assert.deepEqual(state.spendRows(), []);
    assert.deepEqual(sample(text, 'avatar_fleet_refused_payloads_total{'), [
      'avatar_fleet_refused_payloads_total{topic="events",reason="too_large"} 2',
      'avatar_fleet_refused_payloads_total{topic="events",reason="not_finite"} 1',
    ]);
    assert.deepEqual(sample(text, 'avatar_fleet_kiosk_refused_payloads_total{'), ['avatar_fleet_kiosk_refused_payloads_total{kiosk="k"} 3']);
  });

  it("refuses a status whose day figures are negative: the kiosk's row keeps its last good figures", async () => {
    const state = fleet();
    state.onStatus('k', onlineStatus({ today: { sessions: 3, credits: 7.5 } }), false);
    state.onStatus('k', onlineStatus({ today: { sessions: 4, credits: -100 } }), false);
    state.onStatus('k', onlineStatus({ queued: -1 }), false);
    assert.deepEqual([state.row('k')!.todaySessions, state.row('k')!.todayCredits, state.row('k')!.queued, state.row('k')!.refused], [3, 7.5, 0, 2]);
    const text = await createConsoleMetrics(state, () => true).render();
    assert.deepEqual(sample(text, 'avatar_fleet_kiosk_today_credits{'), ['avatar_fleet_kiosk_today_credits{kiosk="k"} 7.5']);
  });

  it('leaves out of a scrape only the family that fails to build, and counts it', async () => {
    const state = fleet();
    state.onStatus('k', onlineStatus(), false);
    const metrics = createConsoleMetrics(state, () => true);
    const { Gauge } = await import('prom-client');
    new Gauge({
      name: 'avatar_fleet_broken',
      help: 'A family whose figures cannot be built.',
      registers: [metrics.registry],
      collect() {
        throw new Error('cannot build');
      },
    });
    const text = await metrics.render();
    assert.deepEqual(sample(text, 'avatar_fleet_kiosk_online{'), ['avatar_fleet_kiosk_online{kiosk="k"} 1']);
    assert.deepEqual(sample(text, 'avatar_fleet_broken'), []);
    assert.deepEqual(sample(text, 'avatar_fleet_scrape_errors_total{'), ['avatar_fleet_scrape_errors_total{metric="avatar_fleet_broken"} 1']);
  });
});

describe('an untrusted kiosk: a flood of invented label values', () => {
  it('100,000 calls with a new avatar, end reason and error code each: at most 9 values per label, the rest folded and counted', async () => {
    const state = fleet();
    const metrics = createConsoleMetrics(state, () => true);
    for (let i = 0; i < 100_000; i++) {
      state.onEvent('k', eventPayload(`e-${i}`, session(T0, { avatar: `a-${i}`, end_reason: `r-${i}` as never, error_code: `c-${i}`, credits_cost: 1 })));
    }
    const text = await metrics.render();
    const perLabel = (name: string) => sample(text, `avatar_fleet_${name}{`).length;
    assert.deepEqual([perLabel('sessions_total'), perLabel('session_errors_total'), perLabel('credits_total')], [9, 9, 9]);
    assert.deepEqual(sample(text, 'avatar_fleet_credits_total{kiosk="k",avatar="other"}'), ['avatar_fleet_credits_total{kiosk="k",avatar="other"} 99992']);
    assert.deepEqual(sample(text, 'avatar_fleet_label_values_folded_total{'), [
      'avatar_fleet_label_values_folded_total{label="end_reason"} 99992',
      'avatar_fleet_label_values_folded_total{label="code"} 99992',
      'avatar_fleet_label_values_folded_total{label="avatar"} 99992',
    ]);
    // Every call still counts in the figures; only its label value is folded.
    assert.equal(state.spendRows().reduce((n, r) => n + r.sessions, 0), 100_000);
    assert.equal(state.spendRows().length, 9);
    assert.ok(series(text).length < 60, `${series(text).length} series for one kiosk`);
  });
});

describe('an untrusted kiosk: answers nobody asked for', () => {
  it('refuses an answer to a command the console never sent: not its last answer, never a screenshot', () => {
    const state = fleet();
    const heard: unknown[] = [];
    state.onAnswer((a) => heard.push(a));
    const answer = state.onResult('k', resultPayload({ id: 'c-forged', cmd: 'screenshot', ok: true, result: { png: PNG_1x1.toString('base64'), width: 1, height: 1 } }));
    assert.equal(answer, null);
    assert.equal(state.screenshot('1'), null);
    assert.deepEqual(heard, []);
    assert.equal(state.row('k'), null, 'no row made up from an unsolicited answer');
  });
});
