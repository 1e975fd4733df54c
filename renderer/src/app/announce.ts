/**
 * What the polite live region says when the call changes (for screen-reader users and anyone who cannot
 * see the screen): connecting, the avatar is ready, listening (the microphone is open again), muted,
 * reconnecting, ended and why, failed and why. Pure: a snapshot of the app in, one message out, and
 * nothing when the visible state has not changed (the region then keeps quiet).
 */
import { t } from '../i18n/locale.svelte.ts';
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
      return { key: 'connecting', text: t('announce.connecting', { name: s.name }) };
    case 'live': {
      if (s.reconnecting) return { key: 'reconnecting', text: t('announce.reconnecting') };
      if (!s.playing) return { key: 'connecting', text: t('announce.connecting', { name: s.name }) };
      if (s.muted) return { key: 'muted', text: t('live.muted') };
      if (previousKey === 'muted' || previousKey === 'reconnecting' || previousKey === 'listening') return { key: 'listening', text: t('announce.listening') };
      return { key: 'ready', text: t('announce.ready', { name: s.name }) };
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
