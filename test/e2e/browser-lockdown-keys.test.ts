/**
 * No way out of the browser-mode kiosk by keyboard, without a browser policy: the host's input guard and
 * window watcher alone (browser-lockdown.ts runs it; with the shipped policy:
 * browser-lockdown-keys-policy.test.ts). Skips, with the reason printed, only without Xvfb, xdotool or
 * Chromium.
 * Run: npm run build && node --import tsx --test --test-timeout=180000 test/e2e/browser-lockdown-keys.test.ts
 */
import { existsSync } from 'node:fs';
import { describeKeysRun } from './browser-lockdown.ts';
import { CHROMIUM, hasXdotool, hasXvfb } from './browser-processes.ts';

const skip = !hasXvfb ? 'needs Xvfb (apt-get install -y xvfb) for a real Chromium window' : !hasXdotool ? 'needs xdotool (apt-get install -y xdotool) to press keys through XTest' : !existsSync(CHROMIUM) ? `no ${CHROMIUM}` : false;
if (skip) console.log(`SKIPPED (the browser-mode kiosk under real keys, without the policy): ${skip}`);
describeKeysRun(false, skip);
