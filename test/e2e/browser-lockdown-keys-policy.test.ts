/**
 * No way out of the browser-mode kiosk by keyboard, with the shipped browser policy installed for the
 * host's browser (browser-lockdown.ts runs it; without: browser-lockdown-keys.test.ts). Skips, with the
 * reason printed, only without Xvfb, xdotool or Chromium, or where no private mount namespace can be made
 * for the policy (not root and no user namespaces).
 * Run: npm run build && node --import tsx --test --test-timeout=180000 test/e2e/browser-lockdown-keys-policy.test.ts
 */
import { existsSync } from 'node:fs';
import { describeKeysRun } from './browser-lockdown.ts';
import { CHROMIUM, hasXdotool, hasXvfb, policyIsolationMissing } from './browser-processes.ts';

const skip = !hasXvfb ? 'needs Xvfb (apt-get install -y xvfb) for a real Chromium window' : !hasXdotool ? 'needs xdotool (apt-get install -y xdotool) to press keys through XTest' : !existsSync(CHROMIUM) ? `no ${CHROMIUM}` : (policyIsolationMissing() ?? false);
if (skip) console.log(`SKIPPED (the browser-mode kiosk under real keys, with the policy): ${skip}`);
describeKeysRun(true, skip);
