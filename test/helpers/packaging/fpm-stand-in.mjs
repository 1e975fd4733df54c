#!/usr/bin/env node
// A stand-in for fpm (electron-builder downloads fpm from GitHub, which this machine cannot reach; Debian
// has no fpm package): it takes the arguments electron-builder's FpmTarget passes for `-t deb` and builds
// the package with Debian's own dpkg-deb, so the deb, its sha512 in latest-linux.yml and the files inside
// it are electron-builder's real output. Only what FpmTarget passes for a deb is understood; anything
// else fails loudly rather than being skipped.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const args = process.argv.slice(2);
const WITH_VALUE = new Set(['-s', '-t', '-d', '--deb-recommends', '--deb-compression', '--architecture', '--after-install', '--after-remove', '--description', '--version', '--package', '--name', '--maintainer', '--vendor', '--url', '--deb-priority', '--license', '--iteration', '--category']);
const FLAGS = new Set(['--force']);
const opts = { depends: [], recommends: [], mappings: [] };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (FLAGS.has(a)) continue;
  if (WITH_VALUE.has(a)) {
    const v = args[++i];
    if (a === '-d') opts.depends.push(v);
    else if (a === '--deb-recommends') opts.recommends.push(v);
    else opts[a.replace(/^-+/, '')] = v;
    continue;
  }
  if (a.startsWith('-')) throw new Error(`fpm stand-in: unknown option ${a}`);
  const eq = a.lastIndexOf('=');
  if (eq <= 0) throw new Error(`fpm stand-in: not a src=dst mapping: ${a}`);
  opts.mappings.push([a.slice(0, eq), a.slice(eq + 1)]);
}
if (opts.s !== 'dir' || opts.t !== 'deb') throw new Error(`fpm stand-in: only -s dir -t deb (got -s ${opts.s} -t ${opts.t})`);

const root = mkdtempSync(join(tmpdir(), 'fpm-stand-in-'));
try {
  for (const [src, dst] of opts.mappings) {
    const target = join(root, dst);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(src.replace(/\/$/, ''), target, { recursive: true, verbatimSymlinks: true });
  }
  const debian = join(root, 'DEBIAN');
  mkdirSync(debian);
  const [summary, ...rest] = opts.description.split('\n');
  const control = [
    `Package: ${opts.name}`,
    `Version: ${opts.version}`,
    `Architecture: ${opts.architecture}`,
    `Maintainer: ${opts.maintainer}`,
    `Priority: ${opts['deb-priority'] ?? 'optional'}`,
    ...(opts.depends.length ? [`Depends: ${opts.depends.join(', ')}`] : []),
    ...(opts.recommends.length ? [`Recommends: ${opts.recommends.join(', ')}`] : []),
    ...(opts.url ? [`Homepage: ${opts.url}`] : []),
    `Description: ${summary}`,
    ...rest.map((l) => ` ${l.trim() || '.'}`),
  ];
  writeFileSync(join(debian, 'control'), `${control.join('\n')}\n`);
  for (const [name, file] of [['postinst', opts['after-install']], ['postrm', opts['after-remove']]]) {
    if (!file) continue;
    writeFileSync(join(debian, name), readFileSync(file));
    chmodSync(join(debian, name), 0o755);
  }
  execFileSync('dpkg-deb', ['--root-owner-group', `-Z${opts['deb-compression'] ?? 'xz'}`, '--build', root, opts.package], { stdio: ['ignore', 'ignore', 'inherit'] });
} finally {
  rmSync(root, { recursive: true, force: true });
}
