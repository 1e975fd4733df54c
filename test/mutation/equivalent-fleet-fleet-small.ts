import type { EquivalentMutant } from './equivalent.ts';

const CALL_FIGURES = 'electron/fleet/call-figures.ts';
const COMMAND_GUARD = 'electron/fleet/command-guard.ts';

/** Equivalent mutants of the fleet's fleet-small files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_FLEET_SMALL: EquivalentMutant[] = [
  // fleet/call-figures.ts
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
];
