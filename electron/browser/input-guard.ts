/**
 * The keys and clicks a visitor could use to reach the browser itself, stopped in the kiosk's page before
 * the browser sees them. server.ts serves this script (`GUARD_PATH`, same origin, so the page's CSP allows
 * it) and puts its tag first in every page it serves, so it runs before the app's own scripts. (Adding it
 * over the DevTools protocol instead is not possible under the kiosk's policy: with DevTools off, Chromium
 * lets no one attach to a page.)
 *
 * Chromium hands a key to the page first and runs its own shortcut only when the page did not
 * `preventDefault()` it; in `--kiosk` this holds even for Ctrl+N, Ctrl+T and Ctrl+Shift+N (measured with
 * Chromium 156 under Xvfb). Some shortcuts open windows the DevTools protocol cannot see or close: the
 * task manager (Shift+Esc), the system print dialog (Ctrl+Shift+P), the save-page dialog (Ctrl+S), the
 * caret-browsing prompt (F7), the page's context menu. So they are stopped here, and the window watcher
 * closes any window that still opens (a page that is loading or hung handles no key).
 *
 * What is let through is an allow-list, so a shortcut a later Chromium adds is stopped too:
 *  - keys without Ctrl, Alt or ⌘ (typing, Tab, Enter, Escape, the arrows), except Shift+Esc and F1–F24;
 *  - Ctrl/⌘ with the editing keys (select all, copy, cut, paste, undo, redo, word-wise moves and deletes)
 *    and the staff shortcut Ctrl+Shift+S;
 *  - Ctrl+Alt with anything: AltGr is Ctrl+Alt on Windows (typing `@` on a German keyboard), the staff
 *    shortcut Ctrl+Alt+K is one, and Chromium binds no Ctrl+Alt shortcut.
 * Everything else with Ctrl, ⌘ or Alt is stopped (Alt+F and Alt+E the menu, Alt+←/→ history, Alt+Home).
 *
 * The script is plain JavaScript kept as text (not a function's `toString()`, which a TypeScript loader
 * may rewrite); test/unit/browser/input-guard.test.ts runs this very text.
 */

/** Ctrl/⌘ combinations the page may use (lower-case key names, `shift+` first when Shift is held). */
export const EDITING_SHORTCUTS = [
  'a', 'c', 'v', 'x', 'z', 'y', 'shift+z', 'shift+v', 'shift+s',
  'backspace', 'delete', 'arrowleft', 'arrowright', 'arrowup', 'arrowdown', 'home', 'end',
  'shift+arrowleft', 'shift+arrowright', 'shift+arrowup', 'shift+arrowdown', 'shift+home', 'shift+end',
] as const;

/** The isolated world the guard runs in (its name shows in DevTools only). */
export const INPUT_GUARD_WORLD = 'avatar-kiosk-guard';

/** The guard's source: capture-phase listeners on the page's `window`. */
export const INPUT_GUARD_SOURCE = `(function (target) {
  var allowed = new Set(${JSON.stringify(EDITING_SHORTCUTS)});
  function keyName(e) {
    var key = String(e.key || '').toLowerCase();
    // A letter or digit by its character on Latin layouts, by its place on others (Ctrl+С on a Russian
    // layout is Ctrl+C to Chromium too).
    if (/^[a-z0-9]$/.test(key)) return key;
    var code = /^(?:Key([A-Z])|Digit([0-9]))$/.exec(String(e.code || ''));
    return code ? (code[1] || code[2]).toLowerCase() : key;
  }
  function stopped(e) {
    var key = keyName(e);
    if (/^f([1-9]|1[0-9]|2[0-4])$/.test(key)) return true;
    if (/^(browser|launch)/.test(key)) return true;
    if (e.ctrlKey && e.altKey) return false;
    if (key === 'control' || key === 'shift' || key === 'meta') return false; // a modifier alone does nothing
    if (e.ctrlKey || e.metaKey) return !allowed.has((e.shiftKey ? 'shift+' : '') + key);
    if (e.altKey || key === 'alt') return true;
    return e.shiftKey && key === 'escape';
  }
  target.addEventListener('keydown', function (e) { if (stopped(e)) e.preventDefault(); }, true);
  target.addEventListener('contextmenu', function (e) { e.preventDefault(); }, true);
})(window);
`;
