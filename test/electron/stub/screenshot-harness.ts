/**
 * The screenshot glue of main's fleet feature (main/host.ts) under the electron stub: a
 * window whose webContents records insertCSS, capturePage and removeInsertedCSS. Prints one line,
 * `HARNESS {calls, result}`, for test/unit/main/fleet-screenshot.test.ts.
 */
import type { BrowserWindow } from 'electron';
// Loaded through tsx first, so the stub hook's `electron` → electron.ts finds it compiled (as main-harness does).
import './electron.ts';
import { captureWithoutCamera, HIDE_CAMERA_PREVIEW_CSS } from '../../../electron/main/host.ts';

const calls: string[] = [];
let hidden = false;
const win = {
  isDestroyed: () => false,
  webContents: {
    async insertCSS(css: string) {
      calls.push(`insertCSS ${css}`);
      hidden = true;
      return 'key-1';
    },
    async capturePage() {
      calls.push(`capturePage (camera preview hidden: ${hidden})`);
      return { getSize: () => ({ width: 1080, height: 1920 }), toPNG: () => Buffer.from('PNGDATA') };
    },
    async removeInsertedCSS(key: string) {
      calls.push(`removeInsertedCSS ${key}`);
      hidden = false;
    },
  },
} as unknown as BrowserWindow;

const shot = await captureWithoutCamera(win);
console.log(`HARNESS ${JSON.stringify({ calls, css: HIDE_CAMERA_PREVIEW_CSS, result: { png: shot.png.toString(), width: shot.width, height: shot.height } })}`);
