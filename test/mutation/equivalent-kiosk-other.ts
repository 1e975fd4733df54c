import type { EquivalentMutant } from './equivalent.ts';

const PAGE_HEADERS = 'electron/kiosk/page-headers.ts';
const STORED_KEY = 'electron/kiosk/stored-key.ts';
const LIFECYCLE = 'electron/kiosk/lifecycle.ts';
const FIRST_LOAD = 'electron/kiosk/first-load.ts';
const KEEP_ALIVE_STORE = 'electron/kiosk/keep-alive-store.ts';
const SERVICE_HEALTH = 'electron/kiosk/service-health.ts';
const CAST = 'electron/kiosk/cast.ts';
const AGE_GATE = 'electron/kiosk/age-gate.ts';
const AVATAR_VOLUME = 'electron/kiosk/avatar-volume.ts';
const CONFIG_KEEPING = 'electron/kiosk/config-keeping.ts';
const APPEARANCE = 'electron/kiosk/appearance.ts';

const TIMER_SET_IN_EXECUTOR =
  'The Promise executor runs synchronously, so the timer is always set by the time this line runs, and the handle cleared is one the clock issued: clearing it unconditionally does the same.';

/** Equivalent mutants of the kiosk-other group (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_KIOSK_OTHER: EquivalentMutant[] = [
  // kiosk/page-headers.ts
  {
    file: PAGE_HEADERS,
    mutator: 'ConditionalExpression',
    line: "return (dot >= 0 && MIME[file.slice(dot).toLowerCase()]) || 'application/octet-stream';",
    original: 'dot >= 0',
    replacement: 'true',
    reason: "Without a dot, lastIndexOf gives -1 and slice(-1) is the name's last character; every MIME key starts with a dot and has at least two characters, so a single character (a '.' included) is never a key and the answer is application/octet-stream either way.",
  },
  // kiosk/stored-key.ts
  {
    file: STORED_KEY,
    mutator: 'ConditionalExpression',
    line: 'if (timer !== null) clock.clearTimeout(timer);',
    original: 'timer !== null',
    replacement: 'true',
    reason: TIMER_SET_IN_EXECUTOR,
  },
  // kiosk/lifecycle.ts
  {
    file: LIFECYCLE,
    mutator: 'ConditionalExpression',
    line: 'if (timer !== null) clock.clearTimeout(timer);',
    above: "logger.error('Shutdown failed'",
    original: 'timer !== null',
    replacement: 'true',
    reason: TIMER_SET_IN_EXECUTOR,
  },
  {
    file: LIFECYCLE,
    mutator: 'ConditionalExpression',
    line: 'if (timer !== null) clock.clearTimeout(timer);',
    above: 'const outcome = await Promise.race([all, timeout]);',
    original: 'timer !== null',
    replacement: 'true',
    reason: TIMER_SET_IN_EXECUTOR,
  },
  {
    file: LIFECYCLE,
    mutator: 'ArrowFunction',
    line: "() => 'done' as const,",
    original: "() => 'done' as const",
    replacement: '() => undefined',
    reason: "boundedShutdown's outcome is only ever compared with 'timeout' (requestQuit and onFatalError warn when it is); undefined is not 'timeout' either, so no warning, phase or call changes.",
  },
  // kiosk/first-load.ts
  {
    file: FIRST_LOAD,
    mutator: 'BlockStatement',
    line: '}).finally(() => {',
    original: '{\n      gone = null;\n    }',
    replacement: '{}',
    reason: 'gone only rejects the promise of the try it was made for; once that try has settled (which is when finally runs), rejecting it again does nothing, and the next try replaces gone before its load starts. A stale gone left in place changes no outcome, log line or timer.',
  },
  // kiosk/keep-alive-store.ts
  {
    file: KEEP_ALIVE_STORE,
    mutator: 'StringLiteral',
    line: "if (bytes.length > MAX_FILE_BYTES) throw Object.assign(new Error('too large'), { code: 'EFBIG' });",
    original: "'too large'",
    replacement: '""',
    reason: "The error is thrown only to the catch just below, which reads nothing of it but its code ('EFBIG', logged); its message is never logged, returned or shown.",
  },
  {
    file: KEEP_ALIVE_STORE,
    mutator: 'StringLiteral',
    line: "logger.warn('The keep-alive file could not be read; using the default keep-alive', { path, code: code ?? 'error' });",
    original: "'error'",
    replacement: '""',
    reason: "Only reached with an error that has no code: readFileSync's errors are Node system or argument errors, which always carry one, and the size check above throws with code EFBIG; so the fallback text is never logged.",
  },
  // kiosk/service-health.ts
  {
    file: SERVICE_HEALTH,
    mutator: 'ConditionalExpression',
    line: "const ok = next.status === 'connected' || next.status === 'demo' || next.status === 'checking';",
    original: "next.status === 'checking'",
    replacement: 'false',
    reason: "set() is never called with status 'checking': that status is only the monitor's start value (CHECKING, ok: true), assigned directly; every call of set() passes demo, connected, a configuration status or a probe failure.",
  },
  {
    file: SERVICE_HEALTH,
    mutator: 'StringLiteral',
    line: "const ok = next.status === 'connected' || next.status === 'demo' || next.status === 'checking';",
    original: "'checking'",
    replacement: '""',
    reason: "set() is never called with status 'checking' (only the start value has it, assigned directly), nor with an empty status, so the comparison is false with either text.",
  },
  // kiosk/cast.ts
  {
    file: CAST,
    mutator: 'StringLiteral',
    line: "const e = toAvatarError(error, 'invalid_config');",
    original: "'invalid_config'",
    replacement: '""',
    reason: "toAvatarError uses the fallback only as the code of the error it wraps, and of e only the message is read: the member's problem is a new AvatarError('invalid_config', …) with e.message in its text and the original error as its cause.",
  },
  // kiosk/age-gate.ts
  {
    file: AGE_GATE,
    mutator: 'ConditionalExpression',
    line: 'const ok = passUntilMs !== null && clock.now() <= passUntilMs;',
    original: 'passUntilMs !== null',
    replacement: 'true',
    reason: 'With no pass, `clock.now() <= null` compares the time with 0: a Clock answers milliseconds since the epoch (Date.now(), or a test clock set to a date), always above 0, so it is false either way.',
  },
  // kiosk/avatar-volume.ts
  {
    file: AVATAR_VOLUME,
    mutator: 'StringLiteral',
    line: "text = readFileSync(path, 'utf8');",
    original: "'utf8'",
    replacement: '""',
    reason: "readFileSync with an empty encoding returns a Buffer (no throw), and the text is only handed to JSON.parse, which converts it with String(buffer), a UTF-8 decode: the same text, so the same volume, errors and log line.",
  },
  {
    file: AVATAR_VOLUME,
    mutator: 'BlockStatement',
    line: '} catch {',
    above: 'raw = JSON.parse(text);',
    original: '{\n    raw = undefined;\n  }',
    replacement: '{}',
    reason: 'raw is declared without a value, so it is already undefined when JSON.parse throws (the assignment never happened): emptying the catch leaves it undefined all the same.',
  },
  // kiosk/config-keeping.ts
  {
    file: CONFIG_KEEPING,
    mutator: 'ConditionalExpression',
    line: "const value = p.field === '(root)' ? undefined : valueAt(used, p.field);",
    original: "p.field === '(root)'",
    replacement: 'false',
    reason: "valueAt(used, '(root)') reads used['(root)'], a key no resolved config has, so it gives undefined as the shortcut does; and a (root) problem's line is built from its message alone, never from value.",
  },
  {
    file: CONFIG_KEEPING,
    mutator: 'StringLiteral',
    line: "const value = p.field === '(root)' ? undefined : valueAt(used, p.field);",
    original: "'(root)'",
    replacement: '""',
    reason: "No problem has an empty field, so the comparison is false and valueAt runs: for a (root) problem it reads used['(root)'], undefined, as the shortcut gives; for any other field it ran anyway.",
  },
  {
    file: CONFIG_KEEPING,
    mutator: 'ConditionalExpression',
    line: 'for (let round = 0; round < 64 && config === null; round++) {',
    original: 'config === null',
    replacement: 'true',
    reason: 'Once resolveConfig succeeded, the extra rounds resolve the same input and environment again (nothing is dropped when nothing throws): the same config and the same problems, only later.',
  },
  {
    file: APPEARANCE,
    mutator: 'ArrowFunction',
    line: 'images.set(m.id, m.imagePath === config.avatar.imagePath ? await imageDataUrl : await loadAvatarImage(m.imagePath).catch(() => null));',
    original: '() => null',
    replacement: '() => undefined',
    reason: "The map is only read by publicCast (cast.ts), as `images.get(m.id) ?? null`: a member whose picture failed reads null either way, and the map never leaves this function.",
  },
];
