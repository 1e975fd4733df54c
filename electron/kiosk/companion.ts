/**
 * The desktop companion, without Electron: where the compact window goes (remembered bounds,
 * validated and clamped to a visible display), what the tray menu says, and what each tray item, the
 * global shortcut and the window's close button do. companion-window.ts wires it to Electron's Tray,
 * Menu, globalShortcut and BrowserWindow; test/unit/kiosk/companion.test.ts drives it with fakes.
 *
 * The renderer owns the microphone and the call, so starting or ending a call is a `command` event sent
 * to it (`toggle-call`, `hangup`, `open-settings`); main never starts a session behind the page's back.
 * Quitting from the tray goes through the lifecycle (`requestQuit`), which hangs up exactly once.
 */
import { z } from 'zod';
import type { CommandEvent } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import type { SessionPhase } from '../core/session-types.ts';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The smallest companion window the screens are designed for. */
export const COMPANION_MIN_SIZE = { width: 360, height: 480 } as const;
/** How much of the window must be on a display for saved bounds to be used as they are. */
const MIN_VISIBLE = { width: 96, height: 48 } as const;
export const BOUNDS_SAVE_DELAY_MS = 500;

const coordinate = z.number().int().min(-100_000).max(100_000);
export const boundsSchema = z.strictObject({
  x: coordinate,
  y: coordinate,
  width: z.number().int().min(1).max(100_000),
  height: z.number().int().min(1).max(100_000),
});

function intersection(a: Rect, b: Rect): { width: number; height: number } {
  const width = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const height = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return { width: Math.max(0, width), height: Math.max(0, height) };
}

/**
 * Where the companion window opens. `saved` is whatever the store held (checked here); `workAreas` are
 * the displays' work areas, the primary first. Saved bounds are kept when enough of them is on a display
 * (then only clamped into it); otherwise the window opens at its default size in the primary's
 * bottom-right corner, 24 px from the edges, where companions usually sit.
 */
export function placeCompanion(saved: unknown, workAreas: readonly Rect[], defaultSize: { width: number; height: number }): Rect {
  const primary = workAreas[0] ?? { x: 0, y: 0, width: 1280, height: 720 };
  const fit = (size: { width: number; height: number }, area: Rect) => ({
    width: Math.min(Math.max(size.width, COMPANION_MIN_SIZE.width), area.width),
    height: Math.min(Math.max(size.height, COMPANION_MIN_SIZE.height), area.height),
  });
  const parsed = boundsSchema.safeParse(saved);
  if (parsed.success) {
    const b = parsed.data;
    let best: { area: Rect; visible: number } | null = null;
    for (const area of workAreas) {
      const i = intersection(b, area);
      if (i.width >= MIN_VISIBLE.width && i.height >= MIN_VISIBLE.height && (!best || i.width * i.height > best.visible)) {
        best = { area, visible: i.width * i.height };
      }
    }
    if (best) {
      const { area } = best;
      const size = fit(b, area);
      const x = Math.min(Math.max(b.x, area.x), area.x + area.width - size.width);
      const y = Math.min(Math.max(b.y, area.y), area.y + area.height - size.height);
      return { x, y, ...size };
    }
  }
  const size = fit(defaultSize, primary);
  const margin = 24;
  return {
    x: Math.max(primary.x, primary.x + primary.width - size.width - margin),
    y: Math.max(primary.y, primary.y + primary.height - size.height - margin),
    ...size,
  };
}

/** Saves bounds after they stop changing for `delayMs` (a drag fires many moves); `flush` saves now. */
export function createBoundsSaver(options: { save: (bounds: Rect) => void; clock?: Clock; delayMs?: number }) {
  const clock = options.clock ?? systemClock;
  const delay = options.delayMs ?? BOUNDS_SAVE_DELAY_MS;
  let pending: Rect | null = null;
  let timer: ReturnType<Clock['setTimeout']> | null = null;
  const flush = () => {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
    if (pending) {
      const b = pending;
      pending = null;
      options.save(b);
    }
  };
  return {
    changed(bounds: Rect) {
      const parsed = boundsSchema.safeParse(bounds);
      if (!parsed.success) return;
      pending = parsed.data;
      if (timer !== null) clock.clearTimeout(timer);
      timer = clock.setTimeout(flush, delay);
    },
    flush,
  };
}

// ---------------------------------------------------------------------------------------------------
// Tray menu, shortcut and close button

export type CompanionAction = { type: 'talk'; avatarId: string } | { type: 'hangup' } | { type: 'settings' } | { type: 'quit' };

export interface TrayItem {
  label: string;
  enabled: boolean;
  /** Absent for a separator. */
  action?: CompanionAction;
  separator?: true;
}

export function isCallActive(phase: SessionPhase): boolean {
  return phase !== 'idle' && phase !== 'ended' && phase !== 'failed';
}

/** The tray menu: one "Talk to <name>" per cast member (off during a call), "Hang up" (only during one), "Settings", "Quit". */
export function trayMenu(cast: ReadonlyArray<{ id: string; name: string }>, phase: SessionPhase): TrayItem[] {
  const inCall = isCallActive(phase);
  return [
    ...cast.map((m): TrayItem => ({ label: `Talk to ${m.name}`, enabled: !inCall, action: { type: 'talk', avatarId: m.id } })),
    { label: 'Hang up', enabled: inCall, action: { type: 'hangup' } },
    { label: '', enabled: true, separator: true },
    { label: 'Settings', enabled: true, action: { type: 'settings' } },
    { label: 'Quit', enabled: true, action: { type: 'quit' } },
  ];
}

export interface CompanionDeps {
  /** Show, restore and focus the window. */
  showWindow(): void;
  hideWindow(): void;
  /** Send a command event to the renderer. */
  sendCommand(event: CommandEvent): void;
  /** The lifecycle's quit (hangs up exactly once, then quits). */
  requestQuit(): Promise<void>;
  /** Whether the app is still running (not shutting down): the close button hides only then. */
  isRunning(): boolean;
}

export interface CompanionController {
  onAction(action: CompanionAction): void;
  /** The global shortcut: bring the window up and start or end a call. */
  onShortcut(): void;
  /** The window's `close` event: while running, hide to the tray instead. */
  onWindowClose(event: { preventDefault(): void }): void;
}

export function createCompanionController(deps: CompanionDeps): CompanionController {
  return {
    onAction(action) {
      switch (action.type) {
        case 'talk':
          deps.showWindow();
          deps.sendCommand({ type: 'command', command: 'toggle-call', avatarId: action.avatarId });
          return;
        case 'hangup':
          deps.sendCommand({ type: 'command', command: 'hangup' });
          return;
        case 'settings':
          deps.showWindow();
          deps.sendCommand({ type: 'command', command: 'open-settings' });
          return;
        case 'quit':
          void deps.requestQuit();
          return;
      }
    },
    onShortcut() {
      deps.showWindow();
      deps.sendCommand({ type: 'command', command: 'toggle-call' });
    },
    onWindowClose(event) {
      if (!deps.isRunning()) return; // quitting: let the window close
      event.preventDefault();
      deps.hideWindow();
    },
  };
}
