/** The venue's privacy notice in the visitor's language: theirs, else the default language's, else the
 *  first given, marked with its `lang` when it is not the visitor's (screen readers pronounce it right). */
import type { LanguageCode, PublicSafety } from '../../../electron/contract.ts';

export function noticeFor(privacy: PublicSafety['privacy'] | undefined, lang: LanguageCode, defaultLanguage: LanguageCode): { text: string; lang: LanguageCode | undefined } | null {
  const notice = privacy?.notice;
  if (!notice) return null;
  const own = notice[lang];
  if (own) return { text: own, lang: undefined };
  const fallback = notice[defaultLanguage] ? defaultLanguage : (Object.keys(notice)[0] as LanguageCode | undefined);
  const text = fallback ? notice[fallback] : undefined;
  return text ? { text, lang: fallback } : null;
}
