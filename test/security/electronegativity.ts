/**
 * Security scan: electronegativity over the app's sources (electron/, renderer/) and its built output
 * (out/renderer, out/preload), plus Google's CSP evaluator over the CSP main sends. Exits non-zero and
 * lists every finding that is not explicitly `eng-disable`d in the code, every file the scanner could
 * not read (a blind spot is a failure, not a pass), and every weak-CSP finding. Prints a summary line.
 *
 * Usage: `tsx test/security/electronegativity.ts` (npm run test:security). Works offline.
 *
 * How the inputs are prepared (in a temp dir mirroring the repo layout, so reported paths are repo paths):
 * - electron/ and renderer/ are copied as they are (the scanner reads .ts and .html, not .svelte: that is
 *   why the built renderer is scanned too).
 * - Built bundles (out/renderer/**.js, out/preload/index.cjs → index.js) are lowered to ES2020 with
 *   esbuild first: the scanner's parser predates class private fields and otherwise skips the whole file.
 * - out/main is NOT scanned: it is electron/main bundled, and bundling strips the `eng-disable`
 *   justifications the source carries (so it would re-report the documented agora-native exception);
 *   electron/main is scanned at source instead.
 * The CLI runs twice: once with `-o <tmp>.sarif` (the findings) and once without, because only the
 * console run reports files it failed to parse.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { transformSync } from 'esbuild';
import { CONTENT_SECURITY_POLICY } from '../../electron/main/page-policy.ts';

const ROOT = join(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);

interface SarifResult {
  ruleId: string;
  level?: string;
  message: { text: string };
  locations?: { physicalLocation?: { artifactLocation?: { uri?: string }; region?: { startLine?: number } } }[];
}

function electronVersion(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules/electron/package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

function lowerForScanner(source: string, file: string): string {
  // ES2020: class private fields/methods become WeakMap helpers the scanner's parser understands.
  return transformSync(source, { loader: 'js', target: 'es2020', format: file.endsWith('.cjs') ? 'cjs' : 'esm', legalComments: 'inline' }).code;
}

function prepare(): { dir: string; scanned: string[]; skipped: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'eng-scan-'));
  const scanned: string[] = [];
  const skipped: string[] = [];
  const copyFilter = (src: string) => !src.includes(`${'/'}node_modules`) && !src.endsWith('.map');
  for (const d of ['electron', 'renderer']) {
    if (existsSync(join(ROOT, d))) {
      cpSync(join(ROOT, d), join(dir, d), { recursive: true, filter: copyFilter });
      scanned.push(`${d}/`);
    } else skipped.push(`${d}/ (absent)`);
  }
  const builtRenderer = join(ROOT, 'out/renderer');
  if (existsSync(builtRenderer)) {
    for (const file of walk(builtRenderer)) {
      const rel = relative(ROOT, file);
      const target = join(dir, rel);
      mkdirSync(dirname(target), { recursive: true });
      if (file.endsWith('.js')) writeFileSync(target, lowerForScanner(readFileSync(file, 'utf8'), file));
      else if (!file.endsWith('.map')) cpSync(file, target);
    }
    scanned.push('out/renderer/ (lowered to ES2020)');
  } else skipped.push('out/renderer/ (not built: npm run build:renderer)');
  const preload = join(ROOT, 'out/preload/index.cjs');
  if (existsSync(preload)) {
    // The scanner ignores .cjs files: scan it as .js.
    mkdirSync(join(dir, 'out/preload'), { recursive: true });
    writeFileSync(join(dir, 'out/preload/index.js'), lowerForScanner(readFileSync(preload, 'utf8'), preload));
    scanned.push('out/preload/index.cjs (as .js, lowered)');
  } else skipped.push('out/preload/ (not built: npx electron-vite build)');
  skipped.push('out/main/ (covered by the electron/main source scan; bundling strips eng-disable annotations)');
  return { dir, scanned, skipped };
}

function runScanner(input: string, version: string, sarif: string | null): { stdout: string; status: number | null } {
  const args = ['electronegativity', '-i', input, '-r', '-e', version, '-x', 'AvailableSecurityFixesGlobalCheck'];
  if (sarif) args.push('-o', sarif);
  const r = spawnSync('npx', ['--no-install', ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
  if (r.error) throw r.error;
  return { stdout: `${r.stdout ?? ''}\n${r.stderr ?? ''}`, status: r.status };
}

/** The `eng-disable` annotations in our sources (what the scanner was told to accept, and why). */
function annotations(dir: string): string[] {
  const out: string[] = [];
  for (const file of walk(dir)) {
    if (!/\.(ts|js|html|svelte)$/.test(file)) continue;
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = /(?:\/\/|\/\*|<!--)[ \t]*eng-disable[ \t]+(.*?)(?:\*\/|-->)?\s*$/.exec(line);
      if (m) out.push(`${relative(dir, file)}:${i + 1} ${m[1]!.trim()}`);
    });
  }
  return out;
}

/** Google's CSP evaluator (the one electronegativity's CSP check uses) over our header policy. */
function evaluateCsp(policy: string): { failures: string[]; notes: string[] } {
  const csp = require('@doyensec/csp-evaluator') as {
    CspParser: new (s: string) => { csp: unknown };
    CspEvaluator: new (c: unknown, v: unknown) => { evaluate(): { severity: number; directive: string; value?: string; description: string }[] };
    Version: { CSP3: unknown };
    severities: Record<string, number>;
  };
  const findings = new csp.CspEvaluator(new csp.CspParser(policy).csp, csp.Version.CSP3).evaluate();
  const s = csp.severities;
  const failures: string[] = [];
  const notes: string[] = [];
  for (const f of findings) {
    const line = `${f.directive}${f.value ? ` ${f.value}` : ''}: ${f.description}`;
    if (f.severity === s.HIGH || f.severity === s.MEDIUM || f.severity === s.SYNTAX) failures.push(line);
    else if (f.severity !== s.NONE && f.severity !== s.INFO) notes.push(line);
  }
  return { failures, notes };
}

function main(): number {
  const version = electronVersion();
  const { dir, scanned, skipped } = prepare();
  const sarifPath = join(dir, '..', `${dir.split('/').pop()}.sarif`);
  try {
    const withOutput = runScanner(dir, version, sarifPath);
    if (!existsSync(sarifPath)) {
      console.error(withOutput.stdout);
      console.error('electronegativity: no SARIF report was written (scanner failed).');
      return 2;
    }
    const results = (JSON.parse(readFileSync(sarifPath, 'utf8')) as { runs: { results: SarifResult[] }[] }).runs.flatMap((r) => r.results);
    const consoleRun = runScanner(dir, version, null);
    const parseErrors = [...consoleRun.stdout.matchAll(/Error parsing (\S+) - (.*)/g)].map((m) => `${relative(dir, m[1]!)}: ${m[2]}`);
    const cspEval = evaluateCsp(CONTENT_SECURITY_POLICY);
    const accepted = annotations(dir);

    console.log(`electronegativity ${'(Electron ' + version + ')'}: scanned ${scanned.join(', ')}`);
    for (const s of skipped) console.log(`  not scanned: ${s}`);
    if (accepted.length) {
      console.log(`  accepted by eng-disable (${accepted.length}):`);
      for (const a of accepted) console.log(`    ${a}`);
    }
    for (const r of results) {
      const loc = r.locations?.[0]?.physicalLocation;
      const where = `${loc?.artifactLocation?.uri ?? '?'}:${loc?.region?.startLine ?? 0}`.replace(/^file:\/\/\/?/, '');
      console.log(`  FINDING ${r.ruleId} ${where} ${r.message.text}`);
    }
    for (const e of parseErrors) console.log(`  UNREADABLE ${e} (the scanner skipped this file)`);
    for (const f of cspEval.failures) console.log(`  CSP (main header) ${f}`);
    for (const n of cspEval.notes) console.log(`  csp note (reviewed): ${n}`);

    const failed = results.length + parseErrors.length + cspEval.failures.length;
    console.log(
      `electronegativity summary: ${results.length} finding(s), ${parseErrors.length} unreadable file(s), ${cspEval.failures.length} CSP problem(s), ${accepted.length} eng-disable exception(s) → ${failed === 0 ? 'PASS' : 'FAIL'}`,
    );
    return failed === 0 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(sarifPath, { force: true });
  }
}

process.exitCode = main();
