/**
 * "Check the video network" (Diagnostics): main creates a test session and hands over its RTC credentials;
 * this screen joins that channel receive-only (the engines' pre-join: no microphone or camera is opened,
 * nothing is published), measures the join, leaves, and reports. Main ends the test session with type 5
 * (never conn_init), so the check costs nothing; it does so on its own if no report comes in time.
 */
import type { NetworkCheckOutcome, NetworkCheckReport, RtcCredentials } from '../../../electron/contract.ts';
import type { LiveView, RtcEngine } from '../rtc/engine.ts';
import type { StaffCalls } from './calls.svelte.ts';

/** The screen gives up on the join after this (main's own bound on the test session is longer). */
export const NETWORK_CHECK_JOIN_TIMEOUT_MS = 20_000;

export const NETWORK_BLOCKED_MESSAGE =
  'This network blocks video calls: the kiosk could not join the video service. Ask the venue’s IT to allow the domains and ports listed in the network guide, or turn on the cloud proxy in the settings.';

export type NetworkCheckView =
  | { status: 'idle' }
  | { status: 'running' }
  | { status: 'done'; report: NetworkCheckReport }
  | { status: 'error'; message: string };

export interface NetworkCheckDeps {
  calls: StaffCalls;
  /** The engine a call with these credentials would use (null: this page has no RTC engines). */
  engineFor: ((rtc: RtcCredentials) => RtcEngine) | null;
  /** Where a receive-only join may put a picture (nothing is shown: the check never renders). */
  view: () => LiveView;
  now?: () => number;
  joinTimeoutMs?: number;
}

export class NetworkCheckRun {
  readonly #deps: NetworkCheckDeps;
  #view = $state<NetworkCheckView>({ status: 'idle' });

  constructor(deps: NetworkCheckDeps) {
    this.#deps = deps;
  }

  get view(): NetworkCheckView {
    return this.#view;
  }

  async run(): Promise<void> {
    if (this.#view.status === 'running') return;
    this.#view = { status: 'running' };
    const engineFor = this.#deps.engineFor;
    if (!engineFor) {
      this.#view = { status: 'error', message: 'This screen has no video engine, so the network cannot be checked here.' };
      return;
    }
    const started = await this.#deps.calls.call((s) => s.networkCheckStart());
    if (!started.ok) {
      this.#view = { status: 'error', message: started.error.message };
      return;
    }
    const { checkId, rtc, cloudProxy } = started.value;
    const outcome = await this.#join(engineFor, rtc, cloudProxy);
    const finished = await this.#deps.calls.call((s) => s.networkCheckFinish({ checkId, outcome }));
    this.#view = finished.ok ? { status: 'done', report: finished.value } : { status: 'error', message: finished.error.message };
  }

  async #join(engineFor: (rtc: RtcCredentials) => RtcEngine, rtc: RtcCredentials, proxy: NetworkCheckOutcome['proxy']): Promise<NetworkCheckOutcome> {
    const now = this.#deps.now ?? (() => performance.now());
    let engine: RtcEngine | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const via = proxy === 'off' ? '' : ` through the cloud proxy (${proxy.toUpperCase()})`;
    try {
      engine = engineFor(rtc);
      if (!engine.prejoin) return { ok: false, joinMs: null, state: 'failed', proxy, message: 'This video engine cannot join without opening the devices, so it was not checked.' };
      const t0 = now();
      const timeoutMs = this.#deps.joinTimeoutMs ?? NETWORK_CHECK_JOIN_TIMEOUT_MS;
      const joined = await Promise.race([
        engine.prejoin(rtc, 'audio', this.#deps.view()).then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      if (!joined) return { ok: false, joinMs: null, state: 'timeout', proxy, message: `${NETWORK_BLOCKED_MESSAGE} (No answer within ${Math.round(timeoutMs / 1000)} s${via}.)` };
      const joinMs = Math.round(now() - t0);
      return { ok: true, joinMs, state: 'connected', proxy, message: `Joined the video network in ${joinMs} ms${via}.` };
    } catch (err) {
      console.warn('Network check: the join failed', err);
      return { ok: false, joinMs: null, state: 'failed', proxy, message: NETWORK_BLOCKED_MESSAGE };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      await engine?.leave().catch((err: unknown) => console.warn('Network check: leave failed', err));
    }
  }
}
