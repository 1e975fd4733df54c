/**
 * The desktop companion's electron-free logic: window placement from remembered bounds
 * (validated, clamped to a visible display), the debounced bounds saver on a fake clock, the tray menu,
 * and what tray items, the shortcut and the close button do.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandEvent } from '../../../electron/contract.ts';
import { FakeClock, StrictClock } from '../../helpers/fake-clock.ts';
import { createBoundsSaver, createCompanionController, placeCompanion, trayMenu, type Rect } from '../../../electron/kiosk/companion.ts';

const PRIMARY: Rect = { x: 0, y: 0, width: 1920, height: 1040 };
const RIGHT: Rect = { x: 1920, y: 0, width: 1280, height: 984 };
const DEFAULT = { width: 420, height: 640 };

describe('placeCompanion', () => {
  it('keeps saved bounds that are on a display', () => {
    assert.deepEqual(placeCompanion({ x: 100, y: 80, width: 500, height: 700 }, [PRIMARY, RIGHT], DEFAULT), { x: 100, y: 80, width: 500, height: 700 });
    assert.deepEqual(placeCompanion({ x: 2000, y: 100, width: 400, height: 600 }, [PRIMARY, RIGHT], DEFAULT), { x: 2000, y: 100, width: 400, height: 600 });
  });

  it('clamps bounds partly off-screen into the display that shows most of them, and sizes into [360×480, work area]', () => {
    assert.deepEqual(placeCompanion({ x: 1800, y: 900, width: 420, height: 640 }, [PRIMARY], DEFAULT), { x: 1500, y: 400, width: 420, height: 640 });
    assert.deepEqual(placeCompanion({ x: 10, y: 10, width: 200, height: 100 }, [PRIMARY], DEFAULT), { x: 10, y: 10, width: 360, height: 480 });
    assert.deepEqual(placeCompanion({ x: 0, y: 0, width: 5000, height: 5000 }, [PRIMARY], DEFAULT), { x: 0, y: 0, width: 1920, height: 1040 });
  });

  it('opens at the default size in the primary corner when the saved display is gone or the bounds are garbage', () => {
    const corner = { x: 1920 - 420 - 24, y: 1040 - 640 - 24, width: 420, height: 640 };
    assert.deepEqual(placeCompanion({ x: 2000, y: 100, width: 400, height: 600 }, [PRIMARY], DEFAULT), corner, 'the right-hand monitor was unplugged');
    assert.deepEqual(placeCompanion({ x: 1900, y: 1030, width: 400, height: 600 }, [PRIMARY], DEFAULT), corner, 'only a sliver was visible');
    for (const garbage of [undefined, null, 'big', { x: 1, y: 2 }, { x: 1.5, y: 2, width: 400, height: 600 }, { x: 0, y: 0, width: 400, height: 600, extra: 1 }]) {
      assert.deepEqual(placeCompanion(garbage, [PRIMARY], DEFAULT), corner, JSON.stringify(garbage));
    }
  });
});

describe('placeCompanion at its edges', () => {
  it('saved bounds count as on a display from 96 × 48 px visible on it', () => {
    // 96 px wide and 48 px high on the primary: kept (clamped in).
    assert.deepEqual(placeCompanion({ x: 1920 - 96, y: 1040 - 48, width: 400, height: 600 }, [PRIMARY], DEFAULT), { x: 1520, y: 440, width: 400, height: 600 });
    const corner = { x: 1920 - 420 - 24, y: 1040 - 640 - 24, width: 420, height: 640 };
    assert.deepEqual(placeCompanion({ x: 1920 - 95, y: 0, width: 400, height: 600 }, [PRIMARY], DEFAULT), corner, '95 px wide is a sliver');
    assert.deepEqual(placeCompanion({ x: 0, y: 1040 - 47, width: 400, height: 600 }, [PRIMARY], DEFAULT), corner, '47 px high is a sliver');
    assert.deepEqual(placeCompanion({ x: -304, y: -552, width: 400, height: 600 }, [PRIMARY], DEFAULT), { x: 0, y: 0, width: 400, height: 600 }, 'off the top-left corner, 96 × 48 still on it');
  });

  it('straddling two displays: the one that shows more of the window takes it', () => {
    // 1620..2020: 300 px on the primary, 100 on the right one.
    assert.deepEqual(placeCompanion({ x: 1620, y: 100, width: 400, height: 600 }, [PRIMARY, RIGHT], DEFAULT), { x: 1520, y: 100, width: 400, height: 600 });
    // 1820..2220: 100 px on the primary, 300 on the right one.
    assert.deepEqual(placeCompanion({ x: 1820, y: 100, width: 400, height: 600 }, [PRIMARY, RIGHT], DEFAULT), { x: 1920, y: 100, width: 400, height: 600 });
    // The right one listed first changes nothing.
    assert.deepEqual(placeCompanion({ x: 1620, y: 100, width: 400, height: 600 }, [RIGHT, PRIMARY], DEFAULT), { x: 1520, y: 100, width: 400, height: 600 });
  });

  it('the corner of a primary that does not start at 0, 0; a primary smaller than the window; no display known', () => {
    const offset: Rect = { x: -1280, y: 200, width: 1280, height: 800 };
    assert.deepEqual(placeCompanion(null, [offset], DEFAULT), { x: -1280 + 1280 - 420 - 24, y: 200 + 800 - 640 - 24, width: 420, height: 640 });
    const tiny: Rect = { x: 100, y: 50, width: 400, height: 500 };
    assert.deepEqual(placeCompanion(null, [tiny], DEFAULT), { x: 100, y: 50, width: 400, height: 500 });
    assert.deepEqual(placeCompanion(null, [], DEFAULT), { x: 1280 - 420 - 24, y: 720 - 640 - 24, width: 420, height: 640 });
    assert.deepEqual(placeCompanion(null, [PRIMARY], { width: 100, height: 100 }), { x: 1920 - 360 - 24, y: 1040 - 480 - 24, width: 360, height: 480 });
  });

  it('bounds out of range are garbage: coordinates beyond ±100 000, a size of 0', () => {
    const corner = { x: 1920 - 420 - 24, y: 1040 - 640 - 24, width: 420, height: 640 };
    for (const b of [{ x: 100_001, y: 0, width: 400, height: 600 }, { x: 0, y: -100_001, width: 400, height: 600 }, { x: 0, y: 0, width: 0, height: 600 }, { x: 0, y: 0, width: 400, height: 100_001 }]) {
      assert.deepEqual(placeCompanion(b, [PRIMARY], DEFAULT), corner, JSON.stringify(b));
    }
    assert.deepEqual(placeCompanion({ x: -100_000, y: 100_000, width: 400, height: 100_000 }, [{ x: -100_000, y: 0, width: 100_000, height: 200_000 }], DEFAULT), { x: -100_000, y: 100_000, width: 400, height: 100_000 }, 'the bounds themselves are in range');
  });
});

describe('createBoundsSaver', () => {
  it('saves the last bounds once they stop changing, and at once on flush; ignores invalid bounds', async () => {
    const clock = new FakeClock();
    const saved: Rect[] = [];
    const saver = createBoundsSaver({ clock, save: (b) => saved.push(b), delayMs: 500 });
    saver.changed({ x: 1, y: 1, width: 400, height: 600 });
    await clock.advance(300);
    saver.changed({ x: 2, y: 2, width: 400, height: 600 });
    await clock.advance(499);
    assert.deepEqual(saved, []);
    await clock.advance(1);
    assert.deepEqual(saved, [{ x: 2, y: 2, width: 400, height: 600 }]);
    saver.changed({ x: 3, y: 3, width: 410, height: 600 });
    saver.changed({ x: Number.NaN, y: 3, width: 410, height: 600 });
    saver.flush();
    saver.flush();
    assert.deepEqual(saved, [{ x: 2, y: 2, width: 400, height: 600 }, { x: 3, y: 3, width: 410, height: 600 }]);
    assert.equal(clock.pendingCount, 0, 'nothing left pending');
  });
});

describe('trayMenu', () => {
  const cast = [{ id: 'ava', name: 'Ava' }, { id: 'kim', name: 'Kim' }];
  const view = (phase: Parameters<typeof trayMenu>[1]) => trayMenu(cast, phase).map((i) => (i.separator ? '---' : `${i.label}${i.enabled ? '' : ' (off)'}`));
  it('offers "Talk to …" per avatar when idle, "Hang up" only during a call', () => {
    assert.deepEqual(view('idle'), ['Talk to Ava', 'Talk to Kim', 'Hang up (off)', '---', 'Settings', 'Quit']);
    assert.deepEqual(view('ended'), ['Talk to Ava', 'Talk to Kim', 'Hang up (off)', '---', 'Settings', 'Quit']);
    assert.deepEqual(view('live'), ['Talk to Ava (off)', 'Talk to Kim (off)', 'Hang up', '---', 'Settings', 'Quit']);
    assert.deepEqual(view('warming'), ['Talk to Ava (off)', 'Talk to Kim (off)', 'Hang up', '---', 'Settings', 'Quit']);
    assert.deepEqual(view('failed'), ['Talk to Ava', 'Talk to Kim', 'Hang up (off)', '---', 'Settings', 'Quit']);
    assert.deepEqual(trayMenu(cast, 'idle')[1]!.action, { type: 'talk', avatarId: 'kim' });
  });
});

describe('createCompanionController', () => {
  function harness(running = true) {
    const calls: string[] = [];
    const commands: CommandEvent[] = [];
    const controller = createCompanionController({
      showWindow: () => calls.push('show'),
      hideWindow: () => calls.push('hide'),
      sendCommand: (e) => {
        calls.push(`command:${e.command}`);
        commands.push(e);
      },
      requestQuit: async () => void calls.push('quit'),
      isRunning: () => running,
    });
    return { controller, calls, commands };
  }

  it('tray items and the shortcut show the window and send the matching command', () => {
    const h = harness();
    h.controller.onAction({ type: 'talk', avatarId: 'kim' });
    h.controller.onAction({ type: 'hangup' });
    h.controller.onAction({ type: 'settings' });
    h.controller.onShortcut();
    assert.deepEqual(h.calls, ['show', 'command:toggle-call', 'command:hangup', 'show', 'command:open-settings', 'show', 'command:toggle-call']);
    assert.deepEqual(h.commands, [
      { type: 'command', command: 'toggle-call', avatarId: 'kim' },
      { type: 'command', command: 'hangup' },
      { type: 'command', command: 'open-settings' },
      { type: 'command', command: 'toggle-call' },
    ]);
  });

  it('Quit asks the lifecycle to quit; the close button hides while running and closes while quitting', () => {
    const h = harness();
    h.controller.onAction({ type: 'quit' });
    let prevented = 0;
    h.controller.onWindowClose({ preventDefault: () => prevented++ });
    assert.deepEqual(h.calls, ['quit', 'hide']);
    assert.equal(prevented, 1);
    const q = harness(false);
    q.controller.onWindowClose({ preventDefault: () => prevented++ });
    assert.deepEqual(q.calls, []);
    assert.equal(prevented, 1);
  });
});

describe('the companion: what the last measurement left alive', () => {
  it('the tray menu item by item: what each does and whether it is on', () => {
    assert.deepEqual(trayMenu([{ id: 'ava', name: 'Ava' }], 'live'), [
      { label: 'Talk to Ava', enabled: false, action: { type: 'talk', avatarId: 'ava' } },
      { label: 'Hang up', enabled: true, action: { type: 'hangup' } },
      { label: '', enabled: true, separator: true },
      { label: 'Settings', enabled: true, action: { type: 'settings' } },
      { label: 'Quit', enabled: true, action: { type: 'quit' } },
    ]);
  });

  it('equally visible on two displays: the first listed takes the window', () => {
    // 1720..2120: 200 px on the primary, 200 on the right one.
    assert.deepEqual(placeCompanion({ x: 1720, y: 100, width: 400, height: 600 }, [PRIMARY, RIGHT], DEFAULT), { x: 1520, y: 100, width: 400, height: 600 });
  });

  it('saves half a second after the last change by default, and clears only timers it set', async () => {
    const clock = new StrictClock();
    const saved: Rect[] = [];
    const saver = createBoundsSaver({ clock, save: (b) => saved.push(b) });
    saver.flush();
    saver.changed({ x: 1, y: 1, width: 400, height: 600 });
    await clock.advance(499);
    assert.deepEqual(saved, []);
    await clock.advance(1);
    assert.deepEqual(saved, [{ x: 1, y: 1, width: 400, height: 600 }]);
    assert.deepEqual(clock.foreignClears, []);
  });
});
