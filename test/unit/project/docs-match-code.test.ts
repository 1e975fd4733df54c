/**
 * The documentation says what the code does, checked from the code's own sources (never a hand list):
 *  - docs/configuration.md's key table lists every key of the config schema (electron/kiosk/config.ts),
 *    and no key the schema does not read; its environment table lists every variable the code reads;
 *  - docs/fleet.md's topic examples use the default topic prefix the schema gives;
 *  - docs/fleet-commands.md's table of commands is the kiosk's (electron/fleet/command-table.ts), row for row;
 *  - docs/cli.md's synopsis and `--help` list every option the CLI parses, and only those;
 *  - the README names the test command, links every guide in docs/, and no link leaves the repository;
 *  - docs/browser-mode.md's browser policy is the shipped file (test/unit/browser/chromium-policy.test.ts checks the file).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { z } from 'zod';
import { CLI_OPTIONS, USAGE } from '../../../electron/cli/index.ts';
import { configFileSchema, ENV_OVERRIDES } from '../../../electron/kiosk/config.ts';
import { mqttSchema } from '../../../electron/kiosk/fleet-config.ts';
import { COMMAND_NAMES, commandRow } from '../../../electron/fleet/command-table.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The schema's key paths: every object node and every leaf (arrays and records are leaves). */
function schemaPaths(schema: z.ZodType, prefix = ''): { leaves: string[]; nodes: string[] } {
  let s = schema as unknown as { def: { type: string; innerType?: unknown; in?: unknown; shape?: Record<string, z.ZodType> } };
  // Wrappers (default, optional, refinements as pipes…) hold the schema that says the shape.
  for (;;) {
    const { def } = s;
    if (def.innerType) s = def.innerType as typeof s;
    else if (def.type === 'pipe' && def.in) s = def.in as typeof s;
    else break;
  }
  if (s.def.type !== 'object' || !s.def.shape) return { leaves: prefix ? [prefix] : [], nodes: [] };
  const leaves: string[] = [];
  const nodes: string[] = prefix ? [prefix] : [];
  for (const [key, child] of Object.entries(s.def.shape)) {
    const sub = schemaPaths(child, prefix ? `${prefix}.${key}` : key);
    leaves.push(...sub.leaves);
    nodes.push(...sub.nodes);
  }
  return { leaves, nodes };
}

/** The backticked names in the first cell of each row of the table under `heading`. */
function tableKeys(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `a "## ${heading}" section`);
  const rest = markdown.slice(start + heading.length + 5);
  const section = rest.slice(0, rest.search(/\n## /) === -1 ? undefined : rest.search(/\n## /));
  const keys: string[] = [];
  for (const line of section.split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!first || /^\s*-+\s*$/.test(first) || /^\s*(key|variable)\s*$/.test(first)) continue;
    keys.push(...[...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
  }
  return keys;
}

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

describe('docs/configuration.md matches the code', () => {
  const doc = read('docs/configuration.md');

  it('lists every key the config schema reads, and only those', () => {
    const { leaves, nodes } = schemaPaths(configFileSchema as unknown as z.ZodType);
    const documented = tableKeys(doc, 'Keys');
    assert.ok(leaves.length > 40, `${leaves.length} keys in the schema`);
    // A key is documented by its own row or by a row for the object holding it (`mqtt`: its fields inline).
    const undocumented = leaves.filter((key) => !documented.some((d) => key === d || key.startsWith(`${d}.`)));
    assert.deepEqual(undocumented, [], 'keys the code reads that the table does not list');
    const unknown = documented.filter((d) => !leaves.includes(d) && !nodes.includes(d));
    assert.deepEqual(unknown, [], 'keys the table lists that the code does not read');
  });

  it('lists every environment variable the code reads, and only those', () => {
    const read = new Set<string>();
    for (const file of [...sources('electron'), ...sources('renderer/src')]) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/env(?:\.|\[['"])((?:AVATAR|KIOSK)_[A-Z0-9_]+)/g)) read.add(m[1]!);
      // Names kept in a constant: `…_ENV = 'KIOSK_…'`.
      for (const m of text.matchAll(/_ENV\s*=\s*'((?:AVATAR|KIOSK)_[A-Z0-9_]+)'/g)) read.add(m[1]!);
    }
    // The settings the environment overrides are read through one table (kiosk/config.ts).
    for (const o of ENV_OVERRIDES) read.add(o.variable);
    assert.ok(read.has('KIOSK_LOG_LEVEL') && read.has('AVATAR_API_KEY'), [...read].join(' '));
    const documented = tableKeys(doc, 'Environment variables');
    assert.deepEqual([...read].filter((v) => !documented.includes(v)).sort(), [], 'variables read but not documented');
    assert.deepEqual(documented.filter((v) => !read.has(v)).sort(), [], 'variables documented but not read');
  });
});

describe('docs/fleet.md matches the code', () => {
  it('its topic examples use the default topic prefix', () => {
    const prefix = mqttSchema.parse({ url: 'mqtts://broker.example.com:8883' }).topicPrefix;
    const doc = read('docs/fleet.md');
    const topics = [...doc.matchAll(/(?<![A-Za-z0-9_.\/-])([A-Za-z0-9_.-]+)\/(?:%u|\+|#|lobby-1|_fleet|_group|\(\?P<deviceid>)/g)].map((m) => m[1]);
    assert.ok(topics.length >= 8, `${topics.length} topic examples`);
    assert.deepEqual([...new Set(topics)], [prefix]);
  });
});

describe('docs/fleet-commands.md matches the table of commands', () => {
  /** The rows of the markdown table whose header row is `header` (cells trimmed). */
  const tableRows = (markdown: string, header: string): string[][] => {
    const lines = markdown.split('\n');
    const start = lines.findIndex((l) => l.trim() === header);
    assert.ok(start >= 0, `a table headed ${header}`);
    const rows: string[][] = [];
    for (const line of lines.slice(start + 2)) {
      if (!line.startsWith('|')) break;
      rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
    }
    return rows;
  };

  it('lists every command of the table, in its order, with its argument, whether it interrupts a call, what it needs and its summary', () => {
    const documented = tableRows(read('docs/fleet-commands.md'), '| command | argument | interrupts a call | needs of the host | what it does |');
    const expected = COMMAND_NAMES.map((name) => {
      const row = commandRow(name);
      return [`\`${name}\``, row.arg ? `\`${row.arg.field}\`` : '—', row.interrupts ? 'yes' : 'no', row.needs ? `\`${row.needs}\`` : '—', row.summary];
    });
    assert.ok(expected.length >= 10, `${expected.length} commands`);
    assert.deepEqual(documented, expected, 'docs/fleet-commands.md: write each row as `| `name` | `field` or — | yes/no | `capability` or — | summary |`');
  });
});

describe('docs/cli.md matches the CLI', () => {
  const parsed = Object.keys(CLI_OPTIONS);
  // `npm run --silent cli --` is npm's, not the CLI's.
  const optionsIn = (text: string) => new Set([...text.replaceAll('npm run --silent', '').matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => m[1]!));

  it('the synopsis lists every option the CLI parses, and only those', () => {
    const synopsis = /```sh\n([\s\S]*?)```/.exec(read('docs/cli.md'))![1]!;
    const listed = optionsIn(synopsis);
    assert.deepEqual(parsed.filter((o) => !listed.has(o)), [], 'options missing from the synopsis');
    assert.deepEqual([...listed].filter((o) => !parsed.includes(o)), [], 'options in the synopsis the CLI does not take');
  });

  it('--help lists every option the CLI parses, and only those', () => {
    const listed = optionsIn(USAGE);
    assert.deepEqual(parsed.filter((o) => !listed.has(o)), []);
    assert.deepEqual([...listed].filter((o) => !parsed.includes(o)), []);
  });
});

describe('README', () => {
  const readme = read('README.md');

  it('names the test command CI runs', () => {
    assert.match(readme, /```sh\nnpm test\n```/);
    assert.match(read('.ci/run'), /\nnpm test\n/);
  });

  it('links every guide in docs/, and every link it has resolves inside the repository or is a web address', () => {
    const guides = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]!);
    assert.deepEqual(guides.filter((g) => !links.includes(`docs/${g}`)), [], 'guides the README does not link');
    for (const link of links.filter((l) => !/^https?:\/\//.test(l))) {
      assert.doesNotThrow(() => readFileSync(join(ROOT, link)), `${link} exists`);
      assert.ok(!relative(ROOT, join(ROOT, link)).startsWith('..'), `${link} stays in the repository`);
    }
  });

  it('no guide links out of the repository by a relative path', () => {
    for (const file of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
      for (const m of read(`docs/${file}`).matchAll(/\]\((\.\.\/[^)#\s]+)/g)) {
        assert.ok(!relative(ROOT, join(ROOT, 'docs', m[1]!)).startsWith('..'), `docs/${file} links ${m[1]}`);
      }
    }
  });
});

describe('docs/browser-mode.md: the browser policy', () => {
  it('shows the shipped policy file exactly (resources/chromium-policy/kiosk.json), so the two cannot disagree', () => {
    const block = /```json\n([\s\S]*?)```/.exec(read('docs/browser-mode.md'))![1]!;
    assert.equal(block, read('resources/chromium-policy/kiosk.json'));
  });
});
