import type { EquivalentMutant } from './equivalent.ts';

const METRICS = 'electron/fleet/metrics.ts';

const INC_ZERO =
  "With a figure of 0 the mutant calls inc(0) on an unlabelled counter: prom-client adds 0 to a sample that is already exposed (at 0 or its total), so the exposition is the same; negative figures are still skipped.";
const NULL_NOT_POSITIVE =
  "For a null figure the second test, null > 0, is false in JavaScript, so the counter is still not touched; for a number the condition is unchanged.";

/** Equivalent mutants of the fleet's metrics files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_METRICS: EquivalentMutant[] = [
  {
    file: METRICS,
    mutator: 'EqualityOperator',
    line: 'if (summary.notReadyRetries > 0) notReady.inc(summary.notReadyRetries);',
    original: 'summary.notReadyRetries > 0',
    replacement: 'summary.notReadyRetries >= 0',
    reason: INC_ZERO,
  },
  {
    file: METRICS,
    mutator: 'EqualityOperator',
    line: 'if (summary.reconnects > 0) reconnects.inc(summary.reconnects);',
    original: 'summary.reconnects > 0',
    replacement: 'summary.reconnects >= 0',
    reason: INC_ZERO,
  },
  {
    file: METRICS,
    mutator: 'EqualityOperator',
    line: 'if (summary.creditsCost !== null && summary.creditsCost > 0) credits.inc(summary.creditsCost);',
    original: 'summary.creditsCost > 0',
    replacement: 'summary.creditsCost >= 0',
    reason: INC_ZERO,
  },
  {
    file: METRICS,
    mutator: 'EqualityOperator',
    line: 'if (summary.billedSeconds !== null && summary.billedSeconds > 0) billed.inc(summary.billedSeconds);',
    original: 'summary.billedSeconds > 0',
    replacement: 'summary.billedSeconds >= 0',
    reason: INC_ZERO,
  },
  {
    file: METRICS,
    mutator: 'ConditionalExpression',
    line: 'if (summary.creditsCost !== null && summary.creditsCost > 0) credits.inc(summary.creditsCost);',
    original: 'summary.creditsCost !== null',
    replacement: 'true',
    reason: NULL_NOT_POSITIVE,
  },
  {
    file: METRICS,
    mutator: 'ConditionalExpression',
    line: 'if (summary.billedSeconds !== null && summary.billedSeconds > 0) billed.inc(summary.billedSeconds);',
    original: 'summary.billedSeconds !== null',
    replacement: 'true',
    reason: NULL_NOT_POSITIVE,
  },
  {
    file: METRICS,
    mutator: 'StringLiteral',
    line: "const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();",
    original: "'utf8'",
    replacement: '""',
    reason:
      "Node's Hash.update replaces a falsy encoding with its default, and a string is then hashed as its UTF-8 bytes, exactly as with 'utf8' (a token with a non-ASCII character gives the same digest): the same comparison, the same 200 or 401.",
  },
  {
    file: METRICS,
    mutator: 'ConditionalExpression',
    line: "if (typeof given !== 'string') return false;",
    original: "typeof given !== 'string'",
    replacement: 'false',
    reason:
      "Node hands the Host header as a string, or undefined when the request has none (a repeated Host is discarded, never an array). For undefined the mutant parses http://undefined, whose hostname 'undefined' is not a loopback name, so hostAllowed still answers false (421).",
  },
  {
    file: METRICS,
    mutator: 'StringLiteral',
    line: "const path = (req.url ?? '/').split('?')[0];",
    original: "'/'",
    replacement: '""',
    reason:
      "The fallback is never used: a request that reaches createServer's listener always has url set to its request-target string (Node's parser refuses a request line without one).",
  },
  {
    file: METRICS,
    mutator: 'StringLiteral',
    line: "const parsed = launchStateSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));",
    original: "'utf8'",
    replacement: '""',
    reason:
      "readFileSync with an empty encoding returns the Buffer (an empty encoding is no encoding), and JSON.parse turns it into a string with Buffer's toString, which decodes UTF-8: the same value parsed, the same SyntaxError for a bad file, both inside the same try.",
  },
  {
    file: METRICS,
    mutator: 'ConditionalExpression',
    line: 'if (parsed.success) before = parsed.data.launches;',
    original: 'parsed.success',
    replacement: 'true',
    reason:
      "A failed zod (v4) safeParse has no data, so the mutant's parsed.data.launches throws a TypeError inside the same try, whose catch leaves before at 0: what skipping the assignment does. The file is then written the same way.",
  },
];
