/**
 * Both hosts (the Electron app, the browser mode) start the one feature list (features/index.ts), so a
 * feature is added once and the two cannot drift: neither wires a feature's behaviour by hand.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const HOSTS = ['electron/main/index.ts', 'electron/browser/kiosk-host.ts'];
/** What the features start; a host that calls one of these itself has wired a feature twice. */
const FEATURE_STARTERS = ['createStaffOps', 'startFleetMetrics', 'startFleetHost', 'startSafeUpdates', 'createPowerSaveGuard', 'setupCompanion'];

describe('one feature list for both hosts', () => {
  for (const host of HOSTS) {
    it(`${host} starts kioskFeatures() and wires no feature itself`, () => {
      const code = readFileSync(join(ROOT, host), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      assert.match(code, /kioskFeatures\(\)/);
      for (const starter of FEATURE_STARTERS) assert.doesNotMatch(code, new RegExp(`\\b${starter}\\(`), `${host} calls ${starter} itself`);
    });
  }
});
