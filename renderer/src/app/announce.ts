/**
 * What the polite live region says when the call changes (for screen-reader users and anyone who cannot
 * see the screen): connecting, the avatar is ready, listening (the microphone is open again), muted,
 * reconnecting, ended and why, failed and why. Pure: a snapshot of the app in, one message out, and
 * nothing when the visible state has not changed (the region then keeps quiet).
 *
 * Only changes of meaning are spoken, each once: never a countdown's every second (the connecting
 * screen's steps, the call's time left, the idle prompt, the return to the start). Time is
 * spoken by `timeAnnouncementFor` at the moments that matter: the call's warning and its last 10 s,
 * the idle prompt's last 10 s.
 */
import { t, th } from '../i18n/locale.svelte.ts';
import type { ErrorView } from './error-copy.ts';
import type { Screen } from './KioskApp.svelte.ts';

export interface AnnounceSnapshot {
  screen: Screen;
  name: string;
  reconnecting: boolean;
  playing: boolean;
  muted: boolean;
  wrappingUp: boolean;
  endedBy: 'idle' | 'time' | 'service' | null;
  error: ErrorView | null;
}

export interface Announcement {
  /** Which state this is: a new message is spoken only when the key changes. */
  key: string;
  text: string;
}

export function announcementFor(s: AnnounceSnapshot, previousKey: string): Announcement | null {
  switch (s.screen) {
    case 'connecting':
      // Said once: the steps run side by side (the channel is joined while the avatar wakes up) and
      // their retries and countdowns are not news.
      return { key: 'connecting', text: t('announce.connecting', { name: s.name }) };
    case 'live': {
      if (s.reconnecting) return { key: 'reconnecting', text: t('announce.reconnecting') };
      // Not playing yet: still connecting. Not playing any more (the call is being ended): nothing new.
      if (!s.playing) return previousKey === '' || previousKey === 'connecting' ? { key: 'connecting', text: t('announce.connecting', { name: s.name }) } : null;
      if (s.muted) return { key: 'muted', text: t('live.muted') };
      if (previousKey === 'muted' || previousKey === 'reconnecting' || previousKey === 'listening') return { key: 'listening', text: t('announce.listening') };
      return { key: 'ready', text: th('announce.ready', { name: s.name }) };
    }
    case 'ended': {
      if (s.wrappingUp) return null;
      const key = s.endedBy === 'idle' ? 'endedIdle' : s.endedBy === 'time' ? 'endedTime' : s.endedBy === 'service' ? 'endedService' : 'ended';
      return { key, text: t(`announce.${key}`) };
    }
    case 'error': {
      if (!s.error) return null;
      return { key: `error:${s.error.copy}`, text: t('announce.failed', { reason: t(`error.${s.error.copy}.title`) }) };
    }
    default:
      return null;
  }
}

export interface TimeSnapshot {
  screen: Screen;
  /** Seconds left in the call (null before live). */
  remainingS: number | null;
  /** The configured warning (countdownWarningSeconds). */
  warningS: number;
  /** Seconds left on "Are you still there?" (null when it is not shown). */
  idleLeftS: number | null;
}

/** The seconds a countdown is spoken at, once: enough to act on. */
export const LAST_SECONDS = 10;

/**
 * Time worth saying, at most once per key per call (the caller remembers the keys): the call's warning
 * when it starts, and the idle prompt's last 10 s (once per prompt: `idle` keys are
 * forgotten when the prompt closes, see `isIdleKey`).
 */
export function timeAnnouncementFor(s: TimeSnapshot, locale: { clock(seconds: number): string }): Announcement | null {
  if (s.screen !== 'live') return null;
  if (s.idleLeftS !== null && s.idleLeftS <= LAST_SECONDS && s.idleLeftS > 0) {
    return { key: 'idle:last', text: t('idle.body', { count: s.idleLeftS }) };
  }
  const left = s.remainingS;
  if (left === null || left <= 0) return null;
  // The warning (or the last 10 s, when no longer warning is set): said once, the timer shows the rest.
  if (left <= Math.max(s.warningS, LAST_SECONDS)) return { key: 'call:ending', text: t('live.endingIn', { time: locale.clock(left) }) };
  return null;
}

export const isIdleKey = (key: string): boolean => key.startsWith('idle:');
