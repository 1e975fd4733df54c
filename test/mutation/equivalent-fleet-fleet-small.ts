import type { EquivalentMutant } from './equivalent.ts';

const CALL_FIGURES = 'electron/kiosk/call-figures.ts';
const COMMAND_GUARD = 'electron/fleet/command-guard.ts';
const SIGNED_FEED = 'electron/fleet/signed-feed.ts';
const DEMO_BROKER = 'electron/fleet/console/demo-broker.ts';
const SIMULATED = 'electron/fleet/console/simulated.ts';

const APPLIED_LINE = "const applied = Object.entries(s).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) && k !== 'schedule' ? Object.keys(v).map((sub) => `${k}.${sub}`) : [k]));";
const APPLY_VALUES =
  "apply only gets settings that passed applySettingsSchema (parseCommand, a strict object): avatar and idle are objects, cast an array, schedule an object or null, and JSON has no undefined. So every value is an object, an array (left out by !Array.isArray) or schedule's null (left out by k !== 'schedule'): no value ever decides the test by being a non-object, and the list of applied keys is the same.";

/** Equivalent mutants of the fleet's fleet-small files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_FLEET_SMALL: EquivalentMutant[] = [
  // kiosk/call-figures.ts
  {
    file: CALL_FIGURES,
    mutator: 'StringLiteral',
    line: "#day = '';",
    original: "''",
    replacement: '"Stryker was here!"',
    reason: "Never read as set: #day is read only in #roll and summary, and add and summary both call #roll first, which compares it with localDay(atMs) — always digits and dashes (or 'NaN-NaN-NaN'), so equal to neither '' nor the mutant's text — and so overwrites it before anything else reads it.",
  },
  {
    file: CALL_FIGURES,
    mutator: 'ArrayDeclaration',
    line: '#calls: CallFigures[] = [];',
    original: '[]',
    replacement: '["Stryker was here"]',
    reason: "Never read as set: #calls is read only in add and summary, both after #roll, and the first #roll always finds localDay(atMs) (digits and dashes, or 'NaN-NaN-NaN') unlike the initial '' #day, so it replaces #calls with a fresh [] before the first push or read.",
  },
  // fleet/command-guard.ts
  {
    file: COMMAND_GUARD,
    mutator: 'ConditionalExpression',
    line: 'if (messageExpirySeconds !== undefined && messageExpirySeconds * 1000 > MAX_COMMAND_LIFETIME_MS) {',
    original: 'messageExpirySeconds !== undefined',
    replacement: 'true',
    reason: 'With messageExpirySeconds undefined the second half is undefined * 1000 > MAX_COMMAND_LIFETIME_MS, i.e. NaN > 86400000, which is false: the branch is skipped either way.',
  },
  {
    file: COMMAND_GUARD,
    mutator: 'ConditionalExpression',
    line: 'if (expiresAt !== undefined) {',
    original: 'expiresAt !== undefined',
    replacement: 'true',
    reason: 'With expiresAt undefined the block computes Date.parse(undefined), NaN; both of its tests (NaN <= nowMs, NaN - nowMs > MAX_COMMAND_LIFETIME_MS) are false, so it returns nothing and the function goes on to return null, as when the block is skipped.',
  },
  {
    file: COMMAND_GUARD,
    mutator: 'StringLiteral',
    line: "const file = fileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));",
    original: "'utf8'",
    replacement: '""',
    reason: "readFileSync with the empty encoding returns the Buffer undecoded, and JSON.parse turns its argument into a string with Buffer.prototype.toString(), which decodes UTF-8 by default: the same text (a BOM and invalid bytes come out the same) and so the same parse or the same SyntaxError, caught below.",
  },
  {
    file: COMMAND_GUARD,
    mutator: 'ConditionalExpression',
    line: 'if (file.success) {',
    original: 'file.success',
    replacement: 'true',
    reason: 'When the file fails its schema, file.data is undefined and file.data.done throws a TypeError inside the same try before any entry is set; the catch leaves the map empty, exactly as skipping the block does.',
  },
  {
    file: COMMAND_GUARD,
    mutator: 'ConditionalExpression',
    line: 'if (result.id === null) return;',
    original: 'result.id === null',
    replacement: 'false',
    reason: "The map's keys are strings (started(id: string) and entries read through entrySchema's z.string() id), so entries.get(null) is undefined and the next line, if (!e) return, returns just the same.",
  },
  // fleet/signed-feed.ts
  {
    file: SIGNED_FEED,
    mutator: 'MethodExpression',
    line: "const der = Buffer.from(base64.trim(), 'base64');",
    original: 'base64.trim()',
    replacement: 'base64',
    reason: "Node's base64 decoder skips every character outside the base64 alphabet, whitespace included, so Buffer.from(' k\\n', 'base64') and Buffer.from('k', 'base64') are the same bytes: the trim changes nothing that is decoded.",
  },
  {
    file: SIGNED_FEED,
    mutator: 'BlockStatement',
    line: '} catch {',
    above: "return createPublicKey({ key: der, format: 'der', type: 'spki' });",
    original: '{\n    return null;\n  }',
    replacement: '{}',
    reason: "Unreachable: the check above lets through only 44 bytes that start with the whole fixed SPKI header (SEQUENCE, AlgorithmIdentifier with the Ed25519 OID, BIT STRING of 33 bytes, no unused bits), so the DER is always well formed, and OpenSSL's Ed25519 import takes any 32 bytes as the key without a point check (all-zero, all-0xff and 2000 random keys tried): createPublicKey does not throw there.",
  },
  {
    file: SIGNED_FEED,
    mutator: 'StringLiteral',
    line: "super({ provider: 'generic', url: configuration.url, channel: configuration.channel ?? null }",
    original: "'generic'",
    replacement: '""',
    reason: "GenericProvider and its base Provider read only configuration.url and configuration.channel (electron-updater's providers/GenericProvider.js and Provider.js); the provider name is never read from it, and the updater picks this class through setFeedURL's updateProvider, not by that name.",
  },
  // fleet/console/demo-broker.ts
  {
    file: DEMO_BROKER,
    mutator: 'BooleanLiteral',
    line: 'rmSync(dir, { recursive: true, force: true });',
    above: "child.kill('SIGKILL');",
    original: 'true',
    replacement: 'false',
    reason: "Meant for force: true in the failed start's cleanup (the same line's recursive: true is killed: the folder holds mosquitto.conf). There the folder always exists: mkdtempSync made it a few lines above, and the only other rmSync of it is in stop(), which cannot have run because the broker's handle is never returned from a failed start; so rmSync without force removes it just the same and throws nothing.",
  },
  // fleet/console/simulated.ts
  {
    file: SIMULATED,
    mutator: 'ArithmeticOperator',
    line: 'const start = callStartMs ?? end - 60_000;',
    original: 'end - 60_000',
    replacement: 'end + 60_000',
    reason: "Unreachable: record is only called from finish, which returns unless phase is 'live', and phase becomes 'live' only in startCall, which sets callStartMs to clock.now() in the same breath (finish sets it back to null only together with phase 'idle'); so callStartMs is a number whenever record runs and the fallback is never evaluated.",
  },
  {
    file: SIMULATED,
    mutator: 'ConditionalExpression',
    line: APPLIED_LINE,
    original: "v && typeof v === 'object'",
    replacement: 'true',
    reason: APPLY_VALUES,
  },
  {
    file: SIMULATED,
    mutator: 'LogicalOperator',
    line: APPLIED_LINE,
    original: "v && typeof v === 'object'",
    replacement: "v || typeof v === 'object'",
    reason: APPLY_VALUES,
  },
  {
    file: SIMULATED,
    mutator: 'ConditionalExpression',
    line: APPLIED_LINE,
    original: "typeof v === 'object'",
    replacement: 'true',
    reason: APPLY_VALUES,
  },
];
