import type { EquivalentMutant } from './equivalent.ts';

const SERVER = 'electron/fleet/console/server.ts';
const LINK = 'electron/fleet/console/link.ts';
const INDEX = 'electron/fleet/console/index.ts';


/** Equivalent mutants of the fleet's console-server files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_CONSOLE_SERVER: EquivalentMutant[] = [
  {
    file: SERVER,
    mutator: 'StringLiteral',
    line: "const url = new URL(req.url ?? '/', 'http://console.invalid');",
    original: "'/'",
    replacement: '""',
    reason: "node:http's server hands the handler only requests it parsed, and sets IncomingMessage.url to the request line's target (a string, '' at least) on each; the ?? fallback is never taken (Stryker reports no test reaching it).",
  },
  {
    file: SERVER,
    mutator: 'StringLiteral',
    line: "if (!/^application\\/json\\b/.test(req.headers['content-type'] ?? '')) return send(res, 415",
    original: "''",
    replacement: '"Stryker was here!"',
    reason: "The fallback for a missing Content-Type is only tested against /^application\\/json\\b/; neither '' nor \"Stryker was here!\" starts with application/json, so a POST without the header gets the same 415 either way.",
  },
  {
    file: SERVER,
    mutator: 'StringLiteral',
    line: "const cookie = (req.headers.cookie ?? '')",
    original: "''",
    replacement: '"Stryker was here!"',
    reason: "The fallback for a missing Cookie header is split on ';' and '=' and searched for a cookie named fleet_console (COOKIE, a constant); \"Stryker was here!\" yields one cookie named \"Stryker was here!\", no more a match than '' is, so tokenOk gets null either way.",
  },
  {
    file: LINK,
    mutator: 'StringLiteral',
    line: "client.off('connect', ok);",
    original: "'connect'",
    replacement: '""',
    reason: "Only leaves ready()'s once-listener attached after it gave up. The promise is already rejected by the next line and the timer has fired, so when the broker later accepts, ok() runs clearTimeout on a spent timer and resolve() on a settled promise: nothing is returned, thrown, logged or scheduled differently, and once() removes the listener then.",
  },
  {
    file: INDEX,
    mutator: 'ConditionalExpression',
    line: "...(options.commandTtlS !== undefined ? { commandTtlS: options.commandTtlS } : {}),",
    original: 'options.commandTtlS !== undefined',
    replacement: 'true',
    reason: "Differs only when commandTtlS is undefined: the link then gets commandTtlS: undefined instead of no key, and its only read is `options.commandTtlS ?? DEFAULT_COMMAND_TTL_S` (link.ts), the same 120 either way.",
  },
  {
    file: INDEX,
    mutator: 'ConditionalExpression',
    line: "...(options.reconnectMs !== undefined ? { reconnectMs: options.reconnectMs } : {}),",
    original: 'options.reconnectMs !== undefined',
    replacement: 'true',
    reason: "Differs only when reconnectMs is undefined: the link then gets reconnectMs: undefined instead of no key, and its only read is `options.reconnectMs ?? 3000` (link.ts), the same reconnect period either way.",
  },
  {
    file: INDEX,
    mutator: 'ConditionalExpression',
    line: "...(options.port !== undefined ? { port: options.port } : {}),",
    original: 'options.port !== undefined',
    replacement: 'true',
    reason: "Differs only when port is undefined: the server then gets port: undefined instead of no key, and its only read is `server.listen(options.port ?? 0, …)` (server.ts), a free port either way.",
  },
];
