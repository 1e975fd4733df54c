/**
 * Main → renderer events (`EVENT_CHANNEL`): the session's own events, the shared mute state, spare
 * sessions, tray commands, opening hours, holds, call figures, settings and volume changes, the service's
 * health. Part of the IPC contract (electron/contract.ts re-exports it).
 */
import type { CallMode, RtcCredentials } from '../core/protocol.ts';
import type { SessionEvent } from '../core/session-types.ts';
import type { CallFigures } from './call.ts';
import type { HoldReason, OpeningInfo, ServiceHealth } from './availability.ts';

/** Main → renderer: a tray menu item or the global shortcut asks the renderer (which owns the media) to act. */
export const KIOSK_COMMANDS = ['toggle-call', 'hangup', 'open-settings'] as const;
export type KioskCommand = (typeof KIOSK_COMMANDS)[number];
export interface CommandEvent {
  type: 'command';
  command: KioskCommand;
  /** For `toggle-call` from a tray "Talk to …" item: which cast member. */
  avatarId?: string;
}

/**
 * A pre-warmed ("spare") session's life (fast start): created ahead of the tap, then used by a tap,
 * expired (closed with type 5 before any conn_init, never billed) or failed (dropped quietly).
 * Observers (ledger, metrics) record every spare's end; the renderer may ignore these.
 */
export interface SpareEvent {
  type: 'spare';
  status: 'created' | 'used' | 'expired' | 'failed';
  liveId: string | null;
  callMode: CallMode;
  /** Why it expired or failed (e.g. `max_age`, `nobody_present`, `settings_changed`, an error code). */
  reason?: string;
  /** On `created`: the spare's RTC credentials, so the renderer can join its channel receive-only ahead of
   *  the tap (pre-join). Never logged or recorded. */
  rtc?: RtcCredentials;
}

/** The settings changed while running (a remote `apply`, the staff panel): the page reloads its view of them. */
export interface ConfigChangedEvent {
  type: 'config-changed';
}
/** Staff or the fleet set the avatar's volume: the page plays the avatar's voice at it from now on. */
export interface AvatarVolumeEvent {
  type: 'avatar-volume';
  /** 0–100 %. */
  percent: number;
}

/** The service became reachable or stopped being reachable (or why it is not changed). */
export interface ServiceEvent {
  type: 'service';
  service: ServiceHealth;
}

/** The attract screen shows a calm "back in a moment" screen while held; main refuses calls then too. */
export interface HoldEvent {
  type: 'hold';
  hold: HoldReason | null;
}

export interface OpeningEvent {
  type: 'opening';
  opening: OpeningInfo;
}

export interface CallFiguresEvent {
  type: 'call-figures';
  figures: CallFigures;
}

/** Everything main sends the renderer on `EVENT_CHANNEL`. */
export type KioskEvent = SessionEvent | { type: 'muted'; muted: boolean } | SpareEvent | CommandEvent | OpeningEvent | HoldEvent | CallFiguresEvent | ConfigChangedEvent | AvatarVolumeEvent | ServiceEvent;
