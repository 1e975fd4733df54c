/** The venue's privacy notice in the visitor's language: theirs, else the default language's, else the
 *  first given, marked with its `lang` when it is not the visitor's (screen readers pronounce it right). */
import type { LanguageCode, PublicConfig, PublicSafety } from '../../../electron/contract.ts';
import type { MessageKey } from '../i18n/catalogues/index.ts';

export function noticeFor(privacy: PublicSafety['privacy'] | undefined, lang: LanguageCode, defaultLanguage: LanguageCode): { text: string; lang: LanguageCode | undefined } | null {
  const notice = privacy?.notice;
  if (!notice) return null;
  const own = notice[lang];
  if (own) return { text: own, lang: undefined };
  const fallback = notice[defaultLanguage] ? defaultLanguage : (Object.keys(notice)[0] as LanguageCode | undefined);
  const text = fallback ? notice[fallback] : undefined;
  return text ? { text, lang: fallback } : null;
}

/**
 * Which sentences tell the visitor where their voice (and camera picture) go. On the built-in emulator
 * (PublicConfig `mode: 'demo'`) the call runs on the demo engine: the microphone only moves the demo
 * avatar's mouth and the camera only fills the visitor's own corner, so nothing leaves the device. On the
 * real service (`direct` or `gateway`) they go to the avatar service.
 */
export function sendsKey(serviceMode: PublicConfig['mode'], video: boolean): MessageKey {
  if (serviceMode === 'demo') return video ? 'attract.demoSendsVoicePicture' : 'attract.demoSendsVoice';
  return video ? 'attract.sendsVoicePicture' : 'attract.sendsVoice';
}

/** The age gate's consent sentences (the visitor's own Yes, or staff's PIN), by the same rule as `sendsKey`. */
export function consentKeys(serviceMode: PublicConfig['mode']): { self: MessageKey; staff: MessageKey } {
  return serviceMode === 'demo' ? { self: 'ageGate.demoConsent', staff: 'ageGate.demoStaffConsent' } : { self: 'ageGate.consent', staff: 'ageGate.staffConsent' };
}
