/**
 * The demo engine (renderer/src/rtc/demo-engine.ts) in Debian's Chromium with fake devices, bundled as the
 * build bundles it: call after call it lets go of the visitor's microphone and camera. A stopped track can
 * outlive its call (here the page keeps every track it was given, as the E2E harness's recorder did), so
 * an `ended` listener left on it keeps the whole engine alive with it: over a kiosk's month, one listener
 * and one engine more for every call.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright';

const ROOT = join(import.meta.dirname, '../../..');
const CALLS = 12;

/** The engine and what it needs, as one script that sets `window.DemoEngine`. (The page's code below is a
 *  string: tsx would wrap a function's inner functions in a `__name` helper the page does not have.) */
async function bundleDemoEngine(): Promise<string> {
  const out = await build({
    stdin: {
      contents: "import { DemoEngine } from './renderer/src/rtc/demo-engine.ts'; window.DemoEngine = DemoEngine;",
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

/** Listeners on each track the page holds in `window.__held` (the console's getEventListeners). */
async function listenersOnHeldTracks(cdp: CDPSession): Promise<number[]> {
  const r = await cdp.send('Runtime.evaluate', {
    expression: 'window.__held.map((t) => Object.values(getEventListeners(t)).reduce((n, l) => n + l.length, 0))',
    includeCommandLineAPI: true,
    returnByValue: true,
  });
  return r.result.value as number[];
}

let browser: Browser;
let page: Page;
let cdp: CDPSession;

before(async () => {
  const script = await bundleDemoEngine();
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
  });
  page = await browser.newPage();
  // getUserMedia needs a secure context: 127.0.0.1 is one (the page is served by Playwright, nothing listens).
  await page.route('http://127.0.0.1/', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>demo engine</title>' }));
  await page.goto('http://127.0.0.1/');
  await page.addScriptTag({ content: script });
  cdp = await page.context().newCDPSession(page);
});
after(async () => {
  await browser?.close();
});

describe('DemoEngine in Chromium: the visitor\'s tracks after the call', () => {
  it(`leaves no listener on any microphone or camera track it was given, over ${CALLS} video calls`, async () => {
    const calls = await page.evaluate<string[]>(`(async () => {
      window.__held = [];
      const getUserMedia = async (c) => {
        const stream = await navigator.mediaDevices.getUserMedia(c);
        window.__held.push(...stream.getTracks());
        return stream;
      };
      const view = { avatarHost: document.body, selfHost: document.body, showAvatarStream() {}, showSelfStream() {}, clear() {} };
      // An emulator token with no modelled join delay (electron/core/rtc-ids.ts).
      const creds = { app_id: 'emu-app', channel_id: 'live-user-L1', user_id: 'live-user-C1-L1', token: 'emu-rtc-j0-x', token_expire_at: '1893456000' };
      for (let i = 0; i < ${CALLS}; i++) {
        const engine = new window.DemoEngine({ getUserMedia, imageUrl: null, name: 'Ava', onDeviceChange: () => () => {} });
        await engine.join(creds, 'video', view);
        await engine.leave();
      }
      return window.__held.map((t) => t.kind + ' ' + t.readyState);
    })()`);
    assert.deepEqual(calls, Array.from({ length: CALLS }, () => ['audio ended', 'video ended']).flat(), 'a microphone and a camera per call, all stopped');
    assert.deepEqual(await listenersOnHeldTracks(cdp), Array.from({ length: CALLS * 2 }, () => 0));
  });
});
