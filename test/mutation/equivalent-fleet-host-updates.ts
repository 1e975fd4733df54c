import type { EquivalentMutant } from './equivalent.ts';

const SAFE_UPDATES = 'electron/fleet/safe-updates.ts';
const FLEET_HOST = 'electron/fleet/fleet-host.ts';

/** Only installFailed leaves 'installing'; pin and check refuse to run while installing, so nothing else sets the phase then. */
const ONLY_INSTALL_FAILED_LEAVES_INSTALLING =
  "phase becomes 'installing' only in install() and leaves it only in installFailed(): pin() returns at once while installing, check() too (and an in-flight check never sets the phase after its poke()), and configure() runs only from start and pin.";

/** Equivalent mutants of the fleet's host-updates files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_HOST_UPDATES: EquivalentMutant[] = [
  // fleet/safe-updates.ts
  {
    file: SAFE_UPDATES,
    mutator: 'StringLiteral',
    line: "let phase: UpdatePhase = 'off';",
    original: "'off'",
    replacement: '""',
    reason: "configure() runs synchronously inside startSafeUpdates and sets phase ('idle' or 'off') before anything can read it; the only earlier code (the updater's error listener, the rollout gate) runs on the updater's events, after start returns.",
  },
  {
    file: SAFE_UPDATES,
    mutator: 'ConditionalExpression',
    line: "if (phase === 'installing') installFailed(error);",
    original: "phase === 'installing'",
    replacement: 'true',
    reason: "installFailed begins with `if (phase !== 'installing' || disposed) return;`, so calling it outside an install does nothing either way.",
  },
  {
    file: SAFE_UPDATES,
    mutator: 'ConditionalExpression',
    line: "if (phase !== 'installing' || disposed) return;",
    original: "phase !== 'installing'",
    replacement: 'false',
    reason: `Its three callers all run while installing: the error listener checks phase === 'installing' itself, install()'s catch runs right after phase = 'installing', and the install deadline is set by install() and cleared by installFailed() and dispose(). ${ONLY_INSTALL_FAILED_LEAVES_INSTALLING}`,
  },
  {
    file: SAFE_UPDATES,
    mutator: 'UpdateOperator',
    line: 'generation++;',
    original: 'generation++',
    replacement: 'generation--',
    reason: 'generation is only compared with !== against the value a check captured; counting down changes it just as counting up does, and it never comes back to an earlier value either way.',
  },
  {
    file: SAFE_UPDATES,
    mutator: 'ConditionalExpression',
    line: 'if (checkTimer !== null) clock.clearTimeout(checkTimer);',
    original: 'checkTimer !== null',
    replacement: 'false',
    reason: 'scheduleCheck is called once at start (checkTimer still null) and from the check timer\'s own callback after it set checkTimer = null; nothing else sets checkTimer, so there is never a timer to clear here.',
  },
  {
    file: SAFE_UPDATES,
    mutator: 'ConditionalExpression',
    line: "if (!feed || disposed || ready || phase === 'installing') return;",
    original: "phase === 'installing'",
    replacement: 'false',
    reason: `While installing, ready is never null (install() is only reached from poke(), which needs ready; ready is cleared only by installFailed(), which leaves 'installing', and by configure(), which pin() does not run while installing), so the ready test before it already returns. ${ONLY_INSTALL_FAILED_LEAVES_INSTALLING}`,
  },
  {
    file: SAFE_UPDATES,
    mutator: 'StringLiteral',
    line: "if (!feed || disposed || ready || phase === 'installing') return;",
    original: "'installing'",
    replacement: '""',
    reason: "The same as its `phase === 'installing' → false` mutant: while installing, ready is set and the ready test before it already returns.",
  },
  {
    file: SAFE_UPDATES,
    mutator: 'OptionalChaining',
    line: 'idleMinutes: settings?.idleMinutes ?? 30',
    original: 'settings?.idleMinutes',
    replacement: 'settings.idleMinutes',
    reason: 'Reached only with ready set, i.e. after a check, which needs a feed, which configure() makes only when settings?.url is set; settings is only ever replaced by an object (pin). So settings is never undefined here.',
  },
  {
    file: SAFE_UPDATES,
    mutator: 'StringLiteral',
    line: "lastError = `install of ${ready ?? 'the update'} failed: ${errorText(error)}`;",
    original: "'the update'",
    replacement: '""',
    reason: `Past its guard installFailed runs only while installing, and while installing ready is never null (install() needs ready from poke(); only installFailed() itself and configure() clear it, and configure() does not run while installing). ${ONLY_INSTALL_FAILED_LEAVES_INSTALLING}`,
  },
  {
    file: SAFE_UPDATES,
    mutator: 'ConditionalExpression',
    line: 'if (feed) void check();',
    original: 'feed',
    replacement: 'true',
    reason: 'check() begins with `if (!feed || …) return;`, before it touches any state or the updater, so calling it without a feed does nothing.',
  },
  {
    file: SAFE_UPDATES,
    mutator: 'ObjectLiteral',
    line: "const next: UpdateSettings = { ...(settings ?? { channel: 'latest', idleMinutes: 30, checkEveryMinutes: 240 }) };",
    original: "{ channel: 'latest', idleMinutes: 30, checkEveryMinutes: 240 }",
    replacement: '{}',
    reason: "Used only when the kiosk has no update settings: then there is no url, so configure() makes no feed and nothing reads channel or idleMinutes (poke needs a download); checkEveryMinutes is read as `settings?.checkEveryMinutes ?? 240`, the same 240 when it is missing. The pin itself is added after.",
  },
  {
    file: SAFE_UPDATES,
    mutator: 'StringLiteral',
    line: "const next: UpdateSettings = { ...(settings ?? { channel: 'latest', idleMinutes: 30, checkEveryMinutes: 240 }) };",
    original: "'latest'",
    replacement: '""',
    reason: 'Used only when the kiosk has no update settings: without a url configure() makes no feed, and the channel is read only into a feed.',
  },
  // fleet/fleet-host.ts
  {
    file: FLEET_HOST,
    mutator: 'ConditionalExpression',
    line: '...(options.reconnectMs !== undefined ? { reconnectMs: options.reconnectMs } : {}),',
    original: 'options.reconnectMs !== undefined',
    replacement: 'true',
    reason: 'startMqttLink reads it as `options.reconnectMs ?? 5000`, so an explicit undefined gives the same 5 s as leaving it out.',
  },
  {
    file: FLEET_HOST,
    mutator: 'ConditionalExpression',
    line: '...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),',
    original: 'options.sandbox !== undefined',
    replacement: 'true',
    reason: "The status fields reach the broker only as JSON (mqtt-link's publishStatus: JSON.stringify both for the change test and the payload; the only other reader, ping, takes .version), and JSON leaves out a key whose value is undefined.",
  },
  {
    file: FLEET_HOST,
    mutator: 'StringLiteral',
    line: "logger.error('The fleet link could not start; the kiosk runs without it', { message: toAvatarError(error, 'invalid_config').message });",
    original: "'invalid_config'",
    replacement: '""',
    reason: "Only .message is read, and toAvatarError's fallback sets only the code: the message is the AvatarError's own, 'The operation was cancelled.' for an abort, else the error's message or String(value).",
  },
  {
    file: FLEET_HOST,
    mutator: 'LogicalOperator',
    line: 'if (openGauge && options.registry) options.registry.removeSingleMetric(`${METRIC_PREFIX}open`);',
    original: 'openGauge && options.registry',
    replacement: 'openGauge || options.registry',
    reason: 'openGauge is made exactly when options.registry is truthy (`options.registry ? new Gauge(…) : null`) and neither is reassigned, so both are truthy or both falsy and && and || agree.',
  },
];
