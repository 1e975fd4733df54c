import type { EquivalentMutant } from './equivalent.ts';

const LINK = 'electron/fleet/mqtt-link.ts';

const LAST_STATUS_ONLY_MEETS_JSON =
  'lastStatus is only ever compared with `key`, which is JSON.stringify of an object (it starts with "{"): any other starting or reset value, "" or "Stryker was here!", differs from every key alike, so the first status after a connect is published either way.';

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
];
