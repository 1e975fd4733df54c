import type { EquivalentMutant } from './equivalent.ts';

const ORCHESTRATOR = 'electron/kiosk/call-orchestrator.ts';
const COMPOSE = 'electron/kiosk/compose.ts';
const CONNECTION = 'electron/kiosk/service-connection.ts';
const CALL_STATES = 'electron/kiosk/call-states.ts';

/** The kiosk's session paths after the split (the call orchestrator and the services a call runs through). */
export const EQUIVALENT_KIOSK_SESSION: EquivalentMutant[] = [
  {
    file: ORCHESTRATOR,
    mutator: 'ConditionalExpression',
    line: '...(options.rtcReadyTimeoutMs !== undefined ? { rtcReadyTimeoutMs: options.rtcReadyTimeoutMs } : {}),',
    original: 'options.rtcReadyTimeoutMs !== undefined',
    replacement: 'true',
    reason: "The SessionController copies `rtcReadyTimeoutMs` into its configuration only when it is not undefined (session-controller.ts), so passing the key with an undefined value is the same as leaving it out: the machine then uses its default.",
  },
  {
    file: ORCHESTRATOR,
    mutator: 'ConditionalExpression',
    line: 'run = controller.release({ awaitRtcReady: awaitRendererRtc,',
    original: 'options.rtcReadyTimeoutMs !== undefined',
    replacement: 'true',
    reason: "`release` copies `rtcReadyTimeoutMs` into the session's configuration only when it is not undefined (session-controller.ts), so passing the key with an undefined value is the same as leaving it out.",
  },
  {
    file: ORCHESTRATOR,
    mutator: 'ConditionalExpression',
    line: 'if (active === session && !session.sawTerminal) {',
    above: "// Make sure the final state was seen even if the controller's last event raced the promise.",
    original: 'active === session',
    replacement: 'true',
    reason: '`forward` returns at once when its session is not the active one (its first line), so this half of the condition only repeats that guard.',
  },
  {
    file: ORCHESTRATOR,
    mutator: 'ConditionalExpression',
    line: 'if (active === session && !session.sawTerminal) {',
    above: 'const info = toAvatarError(error).toInfo();',
    original: 'active === session',
    replacement: 'true',
    reason: '`forward` returns at once when its session is not the active one (its first line), so this half of the condition only repeats that guard.',
  },
  {
    file: ORCHESTRATOR,
    mutator: 'ConditionalExpression',
    line: "if (event.type === 'credentials' && active === session) session.resolveCreated(event.liveId);",
    original: 'active === session',
    replacement: 'true',
    reason: "Credentials reach `deliver` only while their session is the active one: a fresh session's once, after its create (it stays active until its end, which also unsubscribes it); an adopted spare's from inside `release` (`emit-credentials` is among the release's effects, session-machine.ts), before any state of it can make the verdict that replaces it.",
  },
  {
    file: ORCHESTRATOR,
    mutator: 'ConditionalExpression',
    line: 'if (active !== session || options.closing()) return;',
    original: 'active !== session',
    replacement: 'false',
    reason: "This runs while its session is active: `launch` calls it for the session `start` has just made active, and `deliver` only while the session's `pending` list is set, which this function and a settled verdict clear. The one place that calls it after a verdict may already have replaced the session is the `!run` branch, and there `release` returned null because the held session had already ended (a held session never reconnects: a lost socket fails it, session-machine.ts), so the `hangup()` just before emits no state and no verdict ran.",
  },
  {
    file: ORCHESTRATOR,
    mutator: 'ArrowFunction',
    line: "const outcome = await Promise.race([hung.then(() => 'done' as const), timeout.then(() => 'timeout' as const)]);",
    original: "() => 'done' as const",
    replacement: '() => undefined',
    reason: "`outcome` is only compared with 'timeout': undefined and 'done' take the same branch.",
  },
  {
    file: COMPOSE,
    mutator: 'ConditionalExpression',
    line: '...(options.apiKeyWeaklyProtected !== undefined ? { weaklyProtected: options.apiKeyWeaklyProtected } : {}),',
    original: 'options.apiKeyWeaklyProtected !== undefined',
    replacement: 'true',
    reason: 'The service key reads `options.weaklyProtected ?? false` (service-key.ts): the key present with an undefined value is the same as the key absent.',
  },
  {
    file: COMPOSE,
    mutator: 'ConditionalExpression',
    line: '...(options.portrait !== undefined ? { portrait: options.portrait } : {}),',
    original: 'options.portrait !== undefined',
    replacement: 'true',
    reason: "The appearance reads `options.portrait ?? configuredPortrait(config)` (appearance.ts): the key present with an undefined value is the same as the key absent.",
  },
  {
    file: COMPOSE,
    mutator: 'ConditionalExpression',
    line: '...(options.demoDevices !== undefined ? { demoDevices: options.demoDevices } : {}),',
    original: 'options.demoDevices !== undefined',
    replacement: 'true',
    reason: 'The appearance only asks `options.demoDevices === true` (appearance.ts): undefined present or absent is the same.',
  },
  {
    file: COMPOSE,
    mutator: 'ConditionalExpression',
    line: '...(options.awaitRendererRtc !== undefined ? { awaitRendererRtc: options.awaitRendererRtc } : {}),',
    original: 'options.awaitRendererRtc !== undefined',
    replacement: 'true',
    reason: 'The call orchestrator reads `options.awaitRendererRtc ?? true` (call-orchestrator.ts): the key present with an undefined value is the same as the key absent.',
  },
  {
    file: COMPOSE,
    mutator: 'ConditionalExpression',
    line: '...(options.rtcReadyTimeoutMs !== undefined ? { rtcReadyTimeoutMs: options.rtcReadyTimeoutMs } : {}),',
    original: 'options.rtcReadyTimeoutMs !== undefined',
    replacement: 'true',
    reason: 'The call orchestrator passes `rtcReadyTimeoutMs` on only when it is not undefined (its `newSession` and `launch`), so the key present with an undefined value is the same as the key absent.',
  },
  {
    file: CONNECTION,
    mutator: 'BooleanLiteral',
    line: 'keepWarm(false);',
    original: 'false',
    replacement: 'true',
    reason: "`close` runs only from the kiosk's shutdown (compose.ts), after `closing()` became true, and `keepWarm(true)` then clears the timer and returns before warming, exactly as `keepWarm(false)` does.",
  },
  {
    file: CALL_STATES,
    mutator: 'ConditionalExpression',
    line: "if (!maxCallSeconds || (state.phase !== 'live' && state.phase !== 'reconnecting')) return state;",
    original: "state.phase !== 'live' && state.phase !== 'reconnecting'",
    replacement: 'false',
    reason: 'Only the live and reconnecting states have `sinceMs` and `endsAtMs` (session-types.ts). For any other state the cap is NaN and `NaN < undefined` is false, so the state is returned as it is, which is what the guard returns.',
  },
];
