/**
 * The input guard's very text (what the host serves to the kiosk's pages) run against a stand-in window:
 * which keys reach the browser and which are stopped. Chromium runs a shortcut only when the page did not
 * prevent it; test/e2e/browser-lockdown.test.ts presses the keys for real.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { EDITING_SHORTCUTS, INPUT_GUARD_SOURCE } from '../../../electron/browser/input-guard.ts';

interface FakeEvent {
  key: string;
  code?: string;
  ctrlKey?: boolean;
  shiftKey?: boolean;
  altKey?: boolean;
  metaKey?: boolean;
}

/** The guard installed on a stand-in window; `press` says whether a keydown was stopped. */
function guarded() {
  const listeners = new Map<string, Array<{ fn: (e: unknown) => void; capture: boolean }>>();
  const window = {
    addEventListener(type: string, fn: (e: unknown) => void, capture: boolean) {
      listeners.set(type, [...(listeners.get(type) ?? []), { fn, capture }]);
    },
  };
  runInNewContext(INPUT_GUARD_SOURCE, { window });
  const fire = (type: string, init: Record<string, unknown>): boolean => {
    let prevented = false;
    const event = { ctrlKey: false, shiftKey: false, altKey: false, metaKey: false, code: '', ...init, preventDefault: () => void (prevented = true) };
    for (const l of listeners.get(type) ?? []) l.fn(event);
    return prevented;
  };
  return { listeners, press: (e: FakeEvent) => fire('keydown', { ...e }), fire };
}

/** `ctrl+shift+n` → an event (the key as Chromium reports it with that layout). */
function combo(text: string, code?: string): FakeEvent {
  const parts = text.split('+');
  const key = parts.pop()!;
  return { key, ...(code ? { code } : {}), ctrlKey: parts.includes('ctrl'), shiftKey: parts.includes('shift'), altKey: parts.includes('alt'), metaKey: parts.includes('meta') };
}

describe('the input guard', () => {
  it('listens in the capture phase for keys and for the context menu, nothing else', () => {
    const { listeners } = guarded();
    assert.deepEqual(
      [...listeners].map(([type, ls]) => [type, ls.map((l) => l.capture)]),
      [
        ['keydown', [true]],
        ['contextmenu', [true]],
      ],
    );
  });

  it('stops every shortcut the review and Chromium\'s own table open a window, a dialog or the menu with', () => {
    const { press } = guarded();
    const ways = [
      'ctrl+n', 'ctrl+t', 'ctrl+h', 'ctrl+o', 'ctrl+s', 'ctrl+shift+N', 'ctrl+j', 'alt+f', 'alt+e', 'F10', 'F12', 'ctrl+shift+I',
      'ctrl+shift+J', 'ctrl+shift+C', 'ctrl+u', 'ctrl+p', 'ctrl+shift+P', 'shift+Escape', 'F7', 'F1', 'F11', 'ctrl+shift+Delete',
      'ctrl+shift+O', 'ctrl+shift+B', 'ctrl+shift+M', 'ctrl+shift+A', 'ctrl+shift+T', 'ctrl+l', 'ctrl+k', 'ctrl+e', 'ctrl+d', 'ctrl+f',
      'ctrl+g', 'ctrl+r', 'F5', 'ctrl+w', 'ctrl+shift+W', 'ctrl+q', 'ctrl+shift+Q', 'ctrl+Tab', 'ctrl+shift+Tab', 'ctrl+PageDown', 'ctrl+1',
      'ctrl+9', 'ctrl+=', 'ctrl+-', 'ctrl+0', 'alt+ArrowLeft', 'alt+ArrowRight', 'alt+Home', 'alt+d', 'alt+F4', 'alt+shift+I', 'Alt',
      'meta+n', 'meta+t', 'meta+q', 'BrowserBack', 'BrowserHome', 'BrowserSearch', 'LaunchApplication1', 'F24',
    ];
    assert.deepEqual(ways.filter((w) => !press(combo(w))), [], 'let through');
  });

  it('lets typing, the kiosk\'s own keys, editing and the staff shortcuts through', () => {
    const { press } = guarded();
    const kept = [
      'a', 'A', '7', ' ', 'Enter', 'Tab', 'shift+Tab', 'Escape', 'Backspace', 'ArrowLeft', 'ArrowRight', 'shift+ArrowLeft', 'Home', 'Delete',
      'Control', 'Shift', 'Meta', 'shift+Shift', 'ctrl+Control',
      // Staff: Ctrl+Shift+S and Ctrl+Alt+K; AltGr is Ctrl+Alt on Windows (typing @ on a German layout).
      'ctrl+shift+S', 'ctrl+alt+k', 'ctrl+alt+q', 'ctrl+alt+@',
      ...EDITING_SHORTCUTS.map((s) => `ctrl+${s}`),
      'meta+c', 'meta+v',
    ];
    assert.deepEqual(kept.filter((k) => press(combo(k))), [], 'stopped');
  });

  it('reads a letter by its place on a non-Latin layout: Ctrl+С on the C key is copy, Ctrl+Т on the N key is stopped', () => {
    const { press } = guarded();
    assert.equal(press(combo('ctrl+с', 'KeyC')), false);
    assert.equal(press(combo('ctrl+т', 'KeyN')), true);
    assert.equal(press(combo('ctrl+shift+Т', 'KeyN')), true);
    assert.equal(press(combo('ctrl+ё', 'Backquote')), true, 'a key that is no letter: by its name, not allowed');
  });

  it('stops the page\'s context menu (Save as, Print, Inspect, View source)', () => {
    const { fire } = guarded();
    assert.equal(fire('contextmenu', {}), true);
  });
});
