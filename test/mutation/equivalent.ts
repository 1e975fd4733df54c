/**
 * Mutants that cannot change behaviour, one by one with the reason. `npm run mutate` reports them apart
 * and leaves them out of the score. Matched by file, mutator, the source text replaced and the
 * replacement (not by line, so an entry survives edits elsewhere in the file); an entry that no longer
 * matches simply stops applying, and the mutant shows up as a survivor again.
 */
export interface EquivalentMutant {
  file: string;
  mutator: string;
  /** Part of the source line the mutant starts on (tells apart the same literal on different lines). */
  line: string;
  original: string;
  replacement: string;
  reason: string;
}

const MACHINE = 'electron/core/session-machine.ts';
const POLICY = 'electron/core/reconnect-policy.ts';
const COMMANDS = 'electron/fleet/commands.ts';
const SETTINGS = 'electron/operations/settings.ts';

export const EQUIVALENT_MUTANTS: EquivalentMutant[] = [
  // operations/settings.ts
  {
    file: SETTINGS,
    mutator: 'StringLiteral',
    line: "const field = [...issue.path.map(String), ...(keys.length ? [keys[0]!] : [])].join('.') || '(settings)';",
    original: "'(settings)'",
    replacement: '""',
    reason: 'The schema checks `{ ...next }`, a plain object, and the root schema has no refinement: every issue has a path or an unknown key, so the fallback name is never used.',
  },
  {
    file: SETTINGS,
    mutator: 'StringLiteral',
    line: "const e = toAvatarError(error, 'invalid_config');",
    original: "'invalid_config'",
    replacement: '""',
    reason: 'Only the code of the wrapped error changes; the function returns only its message and its details.field.',
  },
  {
    file: SETTINGS,
    mutator: 'StringLiteral',
    line: "const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));",
    original: "'utf8'",
    replacement: '""',
    reason: 'An empty encoding makes readFileSync return a Buffer, and JSON.parse reads a Buffer through String(), which decodes UTF-8: the same text.',
  },
  {
    file: SETTINGS,
    mutator: 'LogicalOperator',
    line: "return dotted.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object'",
    original: "o && typeof o === 'object'",
    replacement: "o || typeof o === 'object'",
    reason: 'The two differ only for o === null; `get` reads only settings the schema has accepted, where each step is an object or undefined (a null window is refused first).',
  },
  {
    file: SETTINGS,
    mutator: 'ConditionalExpression',
    line: "return dotted.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object'",
    original: "typeof o === 'object'",
    replacement: 'true',
    reason: 'Differs only for a truthy value that is not an object; reading mode, width, height or rtcEngine of a string, number or boolean gives undefined, as the original does.',
  },
  // fleet/commands.ts: readCommandId
  {
    file: COMMANDS,
    mutator: 'ConditionalExpression',
    line: "(typeof payload === 'string' ? payload : payload.subarray(0, 64 * 1024).toString('utf8'))",
    original: "typeof payload === 'string'",
    replacement: 'true',
    reason: 'A Buffer then takes `.slice(0, 64 * 1024)`, which cuts the same 64 KiB of bytes; JSON.parse and the regex turn it into the same text the original decodes (a text of at most 64 Ki bytes has at most 64 Ki characters, so the second cut is a no-op either way).',
  },
  {
    file: COMMANDS,
    mutator: 'ConditionalExpression',
    line: "if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;",
    original: "typeof raw !== 'object'",
    replacement: 'false',
    reason: 'The other values JSON.parse gives (a string, number or boolean) then reach `.id`, which is undefined on each of them, so the answer is null all the same.',
  },
  {
    file: COMMANDS,
    mutator: 'ConditionalExpression',
    line: "if (typeof id === 'number' && Number.isFinite(id)) return String(id);",
    original: "typeof id === 'number'",
    replacement: 'true',
    reason: 'Number.isFinite is false for every value that is not a number (it does not convert), so the check alone gives the same answer.',
  },
  // reconnect-policy.ts: classify
  {
    file: POLICY,
    mutator: 'ConditionalExpression',
    line: "typeof error === 'string' ? error : undefined",
    original: "typeof error === 'string'",
    replacement: 'true',
    reason: 'A value that is neither an AvatarError nor a string then reaches FATAL_SIGNALS.has() itself; a set of strings never holds it, so the answer stays retry.',
  },
  {
    file: POLICY,
    mutator: 'ConditionalExpression',
    line: 'return signal !== undefined && FATAL_SIGNALS.has(signal)',
    original: 'signal !== undefined',
    replacement: 'true',
    reason: 'FATAL_SIGNALS.has(undefined) is false: the guard only spares a lookup.',
  },
  // session-machine.ts: the idle machine's context
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "callMode: 'audio',",
    original: "'audio'",
    replacement: '""',
    reason: "The idle context's call mode is never read: `start` is the only way out of idle and sets the call mode from the event; the controller reads only liveId from the context.",
  },
  {
    file: MACHINE,
    mutator: 'BooleanLiteral',
    line: 'connInitHeld: false,',
    original: 'false',
    replacement: 'true',
    reason: 'connInitHeld is read only by rtc-ready, which needs awaitRtcReady; with it, `created` and `retry-due` set connInitHeld before any rtc-ready can be taken. Without it the field is never read.',
  },
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "liveId: context.liveId ?? '',",
    original: "''",
    replacement: '"Stryker was here!"',
    reason: 'buildSummary is only called with a liveId: failNow builds a summary only when the context has one, and `ending` (whence end-confirmed) is only entered with a created session. No test can reach it.',
  },
  // cancel during create
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "const reason = ctx.hangupReason ?? 'user_end';",
    original: "'user_end'",
    replacement: '""',
    reason: 'cancelledDuringCreate is set only together with hangupReason (hangup-requested while creating), so the fallback is never taken. No test can reach it.',
  },
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "cancelledDuringCreate: true, endedBy: 'client'",
    original: "'client'",
    replacement: '""',
    reason: "Never seen: if the room is created anyway, `created` sets endedBy 'client' itself; if the create fails or errors, the failure has no summary (no liveId) and the controller reads only liveId from the context.",
  },
  // socket-open
  {
    file: MACHINE,
    mutator: 'ConditionalExpression',
    line: "if (state.phase !== 'connecting' && state.phase !== 'reconnecting') return same;",
    original: "state.phase !== 'reconnecting'",
    replacement: 'true',
    reason: "Ignoring socket-open while reconnecting changes nothing: only the first socket's open time is recorded, and that socket opened before the ack that made the call live (an ack arrives only on an open socket).",
  },
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "if (state.phase !== 'connecting' && state.phase !== 'reconnecting') return same;",
    original: "'reconnecting'",
    replacement: '""',
    reason: 'Same as above: socket-open while reconnecting is ignored either way, the first open time being recorded before live.',
  },
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "lastError: err('not_ready', 'NOT_READY') };",
    original: "'NOT_READY'",
    replacement: '""',
    reason: "The message of this lastError is never shown: its only reader, a drop before the ack, reads the code ('not_ready' picks the visitor's message); every end overwrites lastError with the failure.",
  },
  // hangup-requested
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "case 'idle':",
    original: "'idle'",
    replacement: '""',
    reason: 'Without the label, idle falls out of the switch onto `return same`, which is what the label returns.',
  },
  {
    file: MACHINE,
    mutator: 'StringLiteral',
    line: "case 'ending':",
    original: "'ending'",
    replacement: '""',
    reason: 'Without the label, ending falls out of the switch onto `return same`, which is what the label returns.',
  },
  // rtc-ready
  {
    file: MACHINE,
    mutator: 'BooleanLiteral',
    line: 'rtcReady: true, connInitHeld: false };',
    original: 'false',
    replacement: 'true',
    reason: 'connInitHeld is read only by rtc-ready, which is taken once (rtcReady is then true); a later retry-due sets connInitHeld anew.',
  },
  // retryReconnect
  {
    file: MACHINE,
    mutator: 'ConditionalExpression',
    line: "if (state.phase !== 'reconnecting') return { machine, effects: [] };",
    original: "state.phase !== 'reconnecting'",
    replacement: 'false',
    reason: "retryReconnect is only called with a reconnecting machine (the guard narrows the type for TypeScript). No test can reach the other branch.",
  },
  {
    file: MACHINE,
    mutator: 'ObjectLiteral',
    line: "if (state.phase !== 'reconnecting') return { machine, effects: [] };",
    original: '{ machine, effects: [] }',
    replacement: '{}',
    reason: 'Unreachable: retryReconnect is only called with a reconnecting machine.',
  },
  {
    file: MACHINE,
    mutator: 'ArrayDeclaration',
    line: "if (state.phase !== 'reconnecting') return { machine, effects: [] };",
    original: '[]',
    replacement: '["Stryker was here"]',
    reason: 'Unreachable: retryReconnect is only called with a reconnecting machine.',
  },
  {
    file: MACHINE,
    mutator: 'ArithmeticOperator',
    line: 'socketsOpened: c.socketsOpened + 1, reconnects: c.reconnects + 1',
    original: 'c.socketsOpened + 1',
    replacement: 'c.socketsOpened - 1',
    reason: 'After live, socketsOpened is never read: it numbers the connecting attempts before live (retry-due in warming) and is in no summary; reconnects are counted apart.',
  },
  {
    file: MACHINE,
    mutator: 'ArithmeticOperator',
    line: 'socketsOpened: ctx.socketsOpened + 1, reconnects: ctx.reconnects + 1',
    original: 'ctx.socketsOpened + 1',
    replacement: 'ctx.socketsOpened - 1',
    reason: 'The retry-due of a reconnect: after live, socketsOpened is never read (see above).',
  },
  // fleet/update-policy.ts: offerAccepted
  {
    file: 'electron/fleet/update-policy.ts',
    mutator: 'ConditionalExpression',
    line: "const pct = typeof raw === 'number' ? raw : Number.parseFloat(raw);",
    original: "typeof raw === 'number'",
    replacement: 'false',
    reason: 'Number.parseFloat of a number reads its own decimal text back: the same number (Infinity and NaN included).',
  },
  {
    file: 'electron/fleet/update-policy.ts',
    mutator: 'StringLiteral',
    line: "const pct = typeof raw === 'number' ? raw : Number.parseFloat(raw);",
    original: "'number'",
    replacement: '""',
    reason: 'Same as above: every value then goes through Number.parseFloat, which returns a number unchanged.',
  },
  // fleet/commands.ts: parseCommand
  {
    file: 'electron/fleet/commands.ts',
    mutator: 'ConditionalExpression',
    line: "typeof rec.id === 'string' && id.safeParse(rec.id).success",
    original: "typeof rec.id === 'string'",
    replacement: 'true',
    reason: "The id schema is a string schema: it refuses a non-string id by itself, so the id echoed stays null.",
  },
  {
    file: 'electron/fleet/commands.ts',
    mutator: 'ConditionalExpression',
    line: "raw = JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "typeof payload === 'string'",
    replacement: 'false',
    reason: "A string's toString ignores the encoding argument and returns the string itself.",
  },
  {
    file: 'electron/fleet/commands.ts',
    mutator: 'ConditionalExpression',
    line: "raw = JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "typeof payload === 'string'",
    replacement: 'true',
    reason: "JSON.parse turns a Buffer into text with its toString(), which is UTF-8 by default: the same text.",
  },
  {
    file: 'electron/fleet/commands.ts',
    mutator: 'EqualityOperator',
    line: "raw = JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "typeof payload === 'string'",
    replacement: "typeof payload !== 'string'",
    reason: 'Both branches read the same text from a string and from a Buffer (see the two above).',
  },
  {
    file: 'electron/fleet/commands.ts',
    mutator: 'StringLiteral',
    line: "raw = JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "'string'",
    replacement: '""',
    reason: 'Every payload then takes the toString branch, which reads the same text (see above).',
  },
  {
    file: 'electron/fleet/commands.ts',
    mutator: 'ConditionalExpression',
    line: "typeof raw === 'object' && raw !== null && !Array.isArray(raw)",
    original: 'raw !== null',
    replacement: 'true',
    reason: 'A JSON null then becomes `rec = null` by the same expression (null is falsy downstream), and is refused as "must be a JSON object" all the same.',
  },
  // fleet/event-queue.ts
  {
    file: 'electron/fleet/event-queue.ts',
    mutator: 'ConditionalExpression',
    line: 'if (parsed.success) ({ epoch, acked } = parsed.data);',
    original: 'parsed.success',
    replacement: 'true',
    reason: 'A failed parse has no data: destructuring it throws inside the try, whose catch keeps the fresh epoch, as skipping the branch does.',
  },
  {
    file: 'electron/fleet/event-queue.ts',
    mutator: 'ConditionalExpression',
    line: 'if (!parsed.success) continue;',
    original: '!parsed.success',
    replacement: 'false',
    reason: 'A line that fails the schema has no data: reading its seq throws inside the try, whose catch skips the line, as `continue` does.',
  },
  {
    file: 'electron/fleet/event-queue.ts',
    mutator: 'EqualityOperator',
    line: 'if (lines > 2 * limit) compact();',
    original: 'lines > 2 * limit',
    replacement: 'lines >= 2 * limit',
    reason: 'Compacting one line earlier writes the same waiting events: only the moment of a rewrite changes, never what a restart reads.',
  },
  {
    file: 'electron/fleet/event-queue.ts',
    mutator: 'ArithmeticOperator',
    line: 'if (lines > 2 * limit) compact();',
    original: '2 * limit',
    replacement: '2 / limit',
    reason: 'Compacting on every push writes the same waiting events (see above): more writes, same queue.',
  },
  {
    file: 'electron/fleet/event-queue.ts',
    mutator: 'ConditionalExpression',
    line: 'if (lines > 2 * limit) compact();',
    original: 'lines > 2 * limit',
    replacement: 'true',
    reason: 'Compacting on every push writes the same waiting events (see above): more writes, same queue.',
  },
  // fleet/opening-hours.ts
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'ArithmeticOperator',
    line: 'return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - (ms - (((ms % 1000) + 1000) % 1000));',
    original: 'ms - (((ms % 1000) + 1000) % 1000)',
    replacement: 'ms + (ms % 1000 + 1000) % 1000',
    reason: 'offsetAt is private and only ever given whole-second instants (whole minutes less whole-second offsets), whose sub-second part is 0 however it is computed.',
  },
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'ArithmeticOperator',
    line: 'return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - (ms - (((ms % 1000) + 1000) % 1000));',
    original: '(ms % 1000) + 1000',
    replacement: 'ms % 1000 - 1000',
    reason: 'offsetAt is private and only ever given whole-second instants (whole minutes less whole-second offsets), whose sub-second part is 0 however it is computed.',
  },
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'ArithmeticOperator',
    line: 'return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - (ms - (((ms % 1000) + 1000) % 1000));',
    original: 'ms % 1000',
    replacement: 'ms * 1000',
    reason: 'offsetAt is private and only ever given whole-second instants (whole minutes less whole-second offsets), whose sub-second part is 0 however it is computed.',
  },
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'ConditionalExpression',
    line: 'if (!f) {',
    original: '!f',
    replacement: 'true',
    reason: 'Only the cache of Intl formatters: a new formatter for the same zone formats the same.',
  },
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'ConditionalExpression',
    line: "if (p.type !== 'literal') out[p.type] = Number(p.value);",
    original: "p.type !== 'literal'",
    replacement: 'true',
    reason: 'The separators are then stored under "literal", a key nothing reads.',
  },
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'StringLiteral',
    line: "if (p.type !== 'literal') out[p.type] = Number(p.value);",
    original: "'literal'",
    replacement: '""',
    reason: 'The separators are then stored under "literal", a key nothing reads.',
  },
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'EqualityOperator',
    line: 'const next = intervals.find(([s]) => s > nowMs);',
    original: 's > nowMs',
    replacement: 's >= nowMs',
    reason: 'An interval starting exactly now was already taken as the current one by the line before.',
  },
  {
    file: 'electron/fleet/opening-hours.ts',
    mutator: 'ConditionalExpression',
    line: 'if (timer !== null) clock.clearTimeout(timer);',
    original: 'timer !== null',
    replacement: 'true',
    reason: 'Clearing no timer is harmless on both clocks (the system clock and FakeClock ignore an unknown handle).',
  },
];
