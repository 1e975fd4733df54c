/**
 * What one visitor chose for themselves: the language and accessibility mode. Both start from the
 * configuration (`defaultLanguage`, `accessibility.default`) and go back to it when the visitor leaves
 * (the end screen is dismissed or times out), so the next person finds the kiosk as the venue set it.
 */
import type { LanguageCode, PublicConfig } from '../../../electron/contract.ts';
import { AUTONYMS, locale } from '../i18n/locale.svelte.ts';

/** Idle timings (the idle prompt, the return to the start) are this many times longer in accessibility mode. */
export const ACCESSIBLE_TIME_FACTOR = 2;

export class Visitor {
  #accessible = $state(false);
  #languages = $state<LanguageCode[]>(['en']);
  #reachBandPercent = $state(50);
  #languageChanges = $state(0);

  get language(): LanguageCode {
    return locale.lang;
  }
  get languages(): readonly LanguageCode[] {
    return this.#languages;
  }
  get accessible(): boolean {
    return this.#accessible;
  }
  /** Percent of the screen's height, from the bottom, that holds every control in accessibility mode. */
  get reachBandPercent(): number {
    return this.#reachBandPercent;
  }
  /** Multiply idle timings by this. */
  get timeFactor(): number {
    return this.#accessible ? ACCESSIBLE_TIME_FACTOR : 1;
  }

  autonym(lang: LanguageCode): string {
    return AUTONYMS[lang];
  }

  setLanguage(lang: LanguageCode): void {
    if (!this.#languages.includes(lang) || lang === locale.lang) return;
    locale.set(lang);
    this.#languageChanges++;
  }

  /** How many times the visitor changed the language (the page announces each change). */
  get languageChanges(): number {
    return this.#languageChanges;
  }

  setAccessible(on: boolean): void {
    this.#accessible = on;
  }

  /** Back to the venue's defaults (a new config, or the visitor left). */
  reset(config: PublicConfig | null): void {
    if (!config) return;
    this.#languages = config.languages?.length ? [...config.languages] : ['en'];
    this.#reachBandPercent = config.accessibility?.reachBandPercent ?? 50;
    locale.set(this.#languages.includes(config.defaultLanguage) ? config.defaultLanguage : this.#languages[0]!);
    this.#accessible = config.accessibility?.default ?? false;
  }
}
