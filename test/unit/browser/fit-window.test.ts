/**
 * The start page's fit script (electron/browser/fit-window.ts), its very text run against a stand-in
 * window: the configured size scaled down to the available screen, aspect kept, moved onto it; a window
 * that fits, a kiosk (no fragment) and a screen that says nothing are left alone. The real window under
 * Xvfb: test/e2e/browser-start.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { FIT_RETRY_MS, FIT_TRIES, FIT_WINDOW_SOURCE, fitFragment, fittedSize } from '../../../electron/browser/fit-window.ts';

interface Screen {
  availWidth: number;
  availHeight: number;
  availLeft?: number;
  availTop?: number;
}

/** Run the script in a window at (x, y) of `outer` size on `screen`, opened with `hash`; what it did. */
function run(hash: string, screen: Screen, outer: { width: number; height: number; x?: number; y?: number }, ignoredResizes = 0): string[] {
  const calls: string[] = [];
  const later: Array<() => void> = [];
  const window = {
    location: { hash },
    screen,
    outerWidth: outer.width,
    outerHeight: outer.height,
    screenX: outer.x ?? 0,
    screenY: outer.y ?? 0,
    // As a window on the screen does; one not mapped yet ignores the request.
    resizeTo(w: number, h: number) {
      calls.push(`resizeTo ${w}x${h}`);
      if (ignoredResizes > 0) ignoredResizes--;
      else [this.outerWidth, this.outerHeight] = [w, h];
    },
    moveTo: (x: number, y: number) => void calls.push(`moveTo ${x},${y}`),
    setTimeout(fn: () => void, ms: number) {
      calls.push(`again in ${ms} ms`);
      later.push(fn);
    },
  };
  runInNewContext(FIT_WINDOW_SOURCE, { window });
  while (later.length > 0) later.shift()!();
  return calls;
}

describe('an app window fits its screen', () => {
  it('a portrait 1080×1920 on a 1280×800 desktop: 450×800, kept on the screen', () => {
    assert.equal(fitFragment({ width: 1080, height: 1920 }), '#fit=1080x1920');
    assert.deepEqual(run('#fit=1080x1920', { availWidth: 1280, availHeight: 800 }, { width: 1080, height: 1920, x: 10 }), ['resizeTo 450x800']);
    assert.deepEqual(fittedSize({ width: 1080, height: 1920 }, { width: 1280, height: 800 }), { width: 450, height: 800 });
  });

  it('a panel above (availTop) and a window placed past the right edge: moved onto the available area', () => {
    assert.deepEqual(run('#fit=1080x1920', { availWidth: 1920, availHeight: 1040, availTop: 40 }, { width: 1080, height: 1920, x: 1600, y: 0 }), ['resizeTo 585x1040', 'moveTo 1335,40']);
  });

  it('a landscape size on a portrait screen is limited by the width', () => {
    assert.deepEqual(fittedSize({ width: 1920, height: 1080 }, { width: 1080, height: 1920 }), { width: 1080, height: 607 });
  });

  it('never scaled up, and a window that fits is left alone', () => {
    assert.deepEqual(run('#fit=800x600', { availWidth: 2560, availHeight: 1440 }, { width: 800, height: 600 }), []);
    assert.deepEqual(fittedSize({ width: 800, height: 600 }, { width: 2560, height: 1440 }), { width: 800, height: 600 });
  });

  it('a window that ignores the first requests (not on the screen yet) is asked again, a bounded number of times', () => {
    assert.deepEqual(run('#fit=1080x1920', { availWidth: 1280, availHeight: 800 }, { width: 1080, height: 1920 }, 2), [
      'resizeTo 450x800',
      `again in ${FIT_RETRY_MS} ms`,
      'resizeTo 450x800',
      `again in ${FIT_RETRY_MS} ms`,
      'resizeTo 450x800',
    ]);
    const never = run('#fit=1080x1920', { availWidth: 1280, availHeight: 800 }, { width: 1080, height: 1920 }, Infinity);
    assert.equal(never.filter((c) => c.startsWith('resizeTo')).length, FIT_TRIES);
    assert.equal(never.at(-1), 'resizeTo 450x800', 'no try after the last');
  });

  it('no fragment (a kiosk window), a malformed one, or a screen of no size: nothing done', () => {
    assert.deepEqual(run('', { availWidth: 1280, availHeight: 800 }, { width: 1080, height: 1920 }), []);
    assert.deepEqual(run('#fit=1080x1920x', { availWidth: 1280, availHeight: 800 }, { width: 1080, height: 1920 }), []);
    assert.deepEqual(run('#fit=1080x1920', { availWidth: 0, availHeight: 0 }, { width: 1080, height: 1920 }), []);
  });
});
