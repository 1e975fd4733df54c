/**
 * package.json's `engines.node` tells the truth: every Node it admits is admitted by every package the
 * lockfile installs (their own `engines`, as npm reads them), so a fresh `npm ci` on a Node we name prints no
 * EBADENGINE; and the README and CI name that same Node.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: unknown }> };

describe('engines', () => {
  it('admits no Node that a dependency refuses', () => {
    const ours = pkg.engines.node;
    assert.ok(semver.validRange(ours), ours);
    const refusing = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.engines && typeof p.engines === 'object' && typeof (p.engines as { node?: unknown }).node === 'string')
      .map(([path, p]) => ({ name: path.replace(/^.*node_modules\//, ''), wants: (p.engines as { node: string }).node }))
      .filter(({ wants }) => !semver.subset(ours, wants))
      .map(({ name, wants }) => `${name} wants ${wants}`);
    assert.deepEqual(refusing, [], `engines.node is ${ours}`);
  });

  it('the README and CI name a Node that engines admits', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const named = /\[Node\.js\]\([^)]*\) 22 \((22\.\d+) or later\) or (\d+)\+/.exec(readme);
    assert.ok(named, 'the README names the Node version');
    assert.ok(semver.satisfies(`${named[1]}.0`, pkg.engines.node) && semver.satisfies(`${named[2]}.0.0`, pkg.engines.node));
    assert.ok(semver.minVersion(pkg.engines.node)!.version === `${named[1]}.0`, 'the lowest admitted is the one named');
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    assert.match(ci, new RegExp(`NODE_NEEDED='${pkg.engines.node.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`));
  });
});
