import type { EquivalentMutant } from './equivalent.ts';

const STATE = 'electron/fleet/console/state.ts';

const FIRST_STATUS =
  "isNew is read only here, and `!row.online && row.offlineReason === null` already holds only for a row no status has reached yet: onStatus is the only writer of these fields (nothing outside state.ts assigns to a row: link.ts feeds payloads in, server.ts and metrics.ts only read and serialise rows). Every status sets online; an offline one sets offlineReason to `s.reason ?? 'offline'`, a string, never null; an online one sets online true. A row no status has reached still has the sinceAt and phase it was created with, both null. So this conjunct is true whenever the others are, and dropping it decides nothing.";

const BUFFER_OR_STRING =
  "Both branches give JSON.parse the same text: for a Buffer, JSON.parse(payload) converts it with ToString, i.e. Buffer#toString() with no argument, which decodes UTF-8 like toString('utf8'); for a string, String#toString ignores its argument and returns the same string. So which branch runs changes nothing.";

/** Equivalent mutants of the fleet's console-state files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_CONSOLE_STATE: EquivalentMutant[] = [
  // console/state.ts
  {
    file: STATE,
    mutator: 'ConditionalExpression',
    line: 'const isNew = row.sinceAt === null && !row.online && row.phase === null && row.offlineReason === null;',
    original: 'row.sinceAt === null',
    replacement: 'true',
    reason: FIRST_STATUS,
  },
  {
    file: STATE,
    mutator: 'ConditionalExpression',
    line: 'const isNew = row.sinceAt === null && !row.online && row.phase === null && row.offlineReason === null;',
    original: 'row.phase === null',
    replacement: 'true',
    reason: FIRST_STATUS,
  },
  {
    file: STATE,
    mutator: 'ConditionalExpression',
    line: "return JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "typeof payload === 'string'",
    replacement: 'true',
    reason: BUFFER_OR_STRING,
  },
  {
    file: STATE,
    mutator: 'ConditionalExpression',
    line: "return JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "typeof payload === 'string'",
    replacement: 'false',
    reason: BUFFER_OR_STRING,
  },
  {
    file: STATE,
    mutator: 'EqualityOperator',
    line: "return JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "typeof payload === 'string'",
    replacement: "typeof payload !== 'string'",
    reason: BUFFER_OR_STRING,
  },
  {
    file: STATE,
    mutator: 'StringLiteral',
    line: "return JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));",
    original: "'string'",
    replacement: '""',
    reason: `typeof never yields "", so the test is always false: every payload takes the toString('utf8') branch. ${BUFFER_OR_STRING}`,
  },
  {
    file: STATE,
    mutator: 'BlockStatement',
    line: '} catch {',
    original: '{\n    return undefined;\n  }',
    replacement: '{}',
    reason: 'The catch is the last statement of parseJson: an empty one falls off the end of the function, which returns undefined just as `return undefined` does.',
  },
];
