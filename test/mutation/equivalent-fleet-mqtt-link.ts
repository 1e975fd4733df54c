import type { EquivalentMutant } from './equivalent.ts';

const LINK = 'electron/fleet/mqtt-link.ts';

const LAST_STATUS_ONLY_MEETS_JSON =
  'lastStatus is only ever compared with `key`, which is JSON.stringify of an object (it starts with "{"): any other starting or reset value, "" or "Stryker was here!", differs from every key alike, so the first status after a connect is published either way.';

const GRANTED_NEVER_128 =
  "mqtt.js 5 (client.js subscribe) calls back with its own `subs` list: on a SUBACK with any failure code (bit 0x80) it passes an error and leaves each entry's qos as asked (1); only on success does it copy the granted codes, which are then 0, 1 or 2. So no entry's qos is ever 128 and the filter always yields []: the error line (and its topics) depends only on `error`. Dropping the filter's test or mapping to undefined still gives [].";

const GRANTED_IS_AN_ARRAY =
  "The callback gets no list only when mqtt.js refuses the call before sending it: an invalid topic (ours are built from the validated prefix, kiosk id and group: letters, digits, '.', '_', '-', no wildcard) or a disconnecting client (end() is called only by close(), after it sets `closed`, and the connect handler returns when `closed`). Otherwise it is `subs`, an array, so `granted?.` never short-circuits and `?? []` never applies.";

/** Equivalent mutants of the fleet's mqtt-link files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_MQTT_LINK: EquivalentMutant[] = [
  {
    file: LINK,
    mutator: 'StringLiteral',
    line: "let lastStatus = '';",
    original: "''",
    replacement: '"Stryker was here!"',
    reason: LAST_STATUS_ONLY_MEETS_JSON,
  },
  {
    file: LINK,
    mutator: 'StringLiteral',
    line: "lastStatus = ''; // the broker may have the last will's",
    original: "''",
    replacement: '"Stryker was here!"',
    reason: LAST_STATUS_ONLY_MEETS_JSON,
  },
  {
    file: LINK,
    mutator: 'Regex',
    line: "const protocol = parsed.protocol.replace(/:$/, '');",
    original: '/:$/',
    replacement: '/:/',
    reason: "URL.protocol is the scheme and one ':' (a scheme holds only letters, digits, '+', '-', '.'), so its first ':' is its last character.",
  },
  {
    file: LINK,
    mutator: 'Regex',
    line: "const host = parsed.hostname.replace(/^\\[|\\]$/g, '');",
    original: '/^\\[|\\]$/g',
    replacement: '/\\[|\\]$/g',
    reason: "URL.hostname holds '[' only as the first character of a bracketed IPv6 address ('[' is a forbidden host code point elsewhere), so an unanchored '[' matches the same one.",
  },
  {
    file: LINK,
    mutator: 'Regex',
    line: "const host = parsed.hostname.replace(/^\\[|\\]$/g, '');",
    original: '/^\\[|\\]$/g',
    replacement: '/^\\[|\\]/g',
    reason: "URL.hostname holds ']' only as the last character of a bracketed IPv6 address (']' is a forbidden host code point elsewhere), so an unanchored ']' matches the same one.",
  },
  {
    file: LINK,
    mutator: 'LogicalOperator',
    line: 'rejectUnauthorized: opts.rejectUnauthorized ?? true,',
    original: 'opts.rejectUnauthorized ?? true',
    replacement: 'opts.rejectUnauthorized && true',
    reason: "Gives the same for true and false; for undefined it gives undefined, and the option reaches tls.connect (through tunnelStream and the proxy agent) where an undefined rejectUnauthorized means true (Node's default): the broker's certificate is checked either way.",
  },
  {
    file: LINK,
    mutator: 'ArrowFunction',
    line: 'const refused = granted?.filter((g) => g.qos === 128)',
    original: '(g) => g.qos === 128',
    replacement: '() => undefined',
    reason: GRANTED_NEVER_128,
  },
  {
    file: LINK,
    mutator: 'ConditionalExpression',
    line: 'const refused = granted?.filter((g) => g.qos === 128)',
    original: 'g.qos === 128',
    replacement: 'false',
    reason: GRANTED_NEVER_128,
  },
  {
    file: LINK,
    mutator: 'ArrowFunction',
    line: 'const refused = granted?.filter((g) => g.qos === 128)',
    original: '(g) => g.topic',
    replacement: '() => undefined',
    reason: GRANTED_NEVER_128,
  },
  {
    file: LINK,
    mutator: 'LogicalOperator',
    line: 'const refused = granted?.filter((g) => g.qos === 128)',
    original: 'granted?.filter((g) => g.qos === 128).map((g) => g.topic) ?? []',
    replacement: 'granted?.filter(g => g.qos === 128).map(g => g.topic) && []',
    reason: `${GRANTED_IS_AN_ARRAY} With an array the mutant gives [], which is what the filter gives too (see the qos 128 entries).`,
  },
  {
    file: LINK,
    mutator: 'OptionalChaining',
    line: 'const refused = granted?.filter((g) => g.qos === 128)',
    original: 'granted?.filter',
    replacement: 'granted.filter',
    reason: GRANTED_IS_AN_ARRAY,
  },
  {
    file: LINK,
    mutator: 'ArrayDeclaration',
    line: 'const refused = granted?.filter((g) => g.qos === 128)',
    original: '[]',
    replacement: '["Stryker was here"]',
    reason: GRANTED_IS_AN_ARRAY,
  },
];
