/**
 * The visitor's language: i18next (bundled catalogues, nothing fetched) behind a small rune, so every view
 * that calls `t()` re-renders when the language changes. Plurals come from i18next's `Intl.PluralRules`
 * suffixes (`_one`, `_other`, and `_zero`/`_two`/`_few`/`_many` where a language has them); numbers, times
 * and durations from `Intl` in the chosen language. The staff panel uses the same `t()` (in English).
 */
import i18next, { type TOptions } from 'i18next';
// The codes from their dependency-free module: the contract would bring its zod schemas into the bundle.
import { LANGUAGE_CODES, type LanguageCode } from '../../../electron/core/languages.ts';
import type { AvatarGender } from '../../../electron/contract.ts';
import { CATALOGUES, type MessageKey } from './catalogues/index.ts';

export type { MessageKey };

/** Each language named in itself, for the picker (no flags: a flag is a country, not a language). */
export const AUTONYMS: Record<LanguageCode, string> = {
  en: 'English',
  es: 'Español',
  fr: 'Français',
  de: 'Deutsch',
  'zh-Hans': '简体中文',
  ja: '日本語',
  ar: 'العربية',
};

const RTL = new Set<LanguageCode>(['ar']);

export function isLanguageCode(value: unknown): value is LanguageCode {
  return typeof value === 'string' && (LANGUAGE_CODES as readonly string[]).includes(value);
}

const engine = i18next.createInstance();
void engine.init({
  resources: Object.fromEntries(Object.entries(CATALOGUES).map(([lng, cat]) => [lng, { translation: cat }])),
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGE_CODES],
  // The catalogues are in the bundle: initialise synchronously, so the first render has its text.
  initAsync: false,
  // Svelte escapes text itself; i18next escaping would show "&amp;".
  interpolation: { escapeValue: false },
  returnNull: false,
  showSupportNotice: false,
} as Parameters<typeof engine.init>[0]);

export class Locale {
  #lang = $state<LanguageCode>('en');
  #hostGender = $state<AvatarGender>('neutral');

  get lang(): LanguageCode {
    return this.#lang;
  }
  get dir(): 'ltr' | 'rtl' {
    return RTL.has(this.#lang) ? 'rtl' : 'ltr';
  }

  set(lang: LanguageCode): void {
    this.#lang = lang;
  }

  /** The avatar the visitor talks to: how messages about it agree with it (es "lista", de "Gastgeberin"). */
  setHostGender(gender: AvatarGender): void {
    this.#hostGender = gender;
  }

  /**
   * A message about the avatar: i18next's context picks `<key>_female` / `<key>_male` where the language
   * has one, else `<key>` (worded without a gender where the language allows; Arabic has no such form).
   */
  host(key: MessageKey, options?: TOptions): string {
    const gender = this.#hostGender;
    return this.t(key, gender === 'neutral' ? options : { ...options, context: gender });
  }

  /** The message for `key` in the current language (reading `lang` makes the caller reactive). */
  t(key: MessageKey, options?: TOptions): string {
    return engine.t(key, { ...options, lng: this.#lang }) as string;
  }

  /** 1234.5 → "1,234.5" / "1.234,5" / "١٬٢٣٤٫٥". */
  number(value: number): string {
    return new Intl.NumberFormat(this.#lang).format(value);
  }

  /** A countdown: 75 → "1:15", 3725 → "1:02:05", digits in the language's numbering system. */
  clock(totalSeconds: number): string {
    const s = Math.max(0, Math.floor(totalSeconds));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const one = new Intl.NumberFormat(this.#lang, { useGrouping: false });
    const two = new Intl.NumberFormat(this.#lang, { minimumIntegerDigits: 2, useGrouping: false });
    return h > 0 ? `${one.format(h)}:${two.format(m)}:${two.format(s % 60)}` : `${one.format(m)}:${two.format(s % 60)}`;
  }

  /** 42 → "42 seconds", 60 → "1 minute", 134 → "2 minutes, 14 seconds" (each language's own words). */
  duration(totalSeconds: number): string {
    const s = Math.max(0, Math.round(totalSeconds));
    const unit = (value: number, u: 'second' | 'minute') => new Intl.NumberFormat(this.#lang, { style: 'unit', unit: u, unitDisplay: 'long' }).format(value);
    if (s < 60) return unit(s, 'second');
    const m = Math.floor(s / 60);
    const r = s % 60;
    if (r === 0) return unit(m, 'minute');
    return new Intl.ListFormat(this.#lang, { type: 'unit', style: 'long' }).format([unit(m, 'minute'), unit(r, 'second')]);
  }

  /** A time of day (the staff ledger, status). */
  time(ms: number): string {
    return new Intl.DateTimeFormat(this.#lang, { dateStyle: 'short', timeStyle: 'medium' }).format(ms);
  }
}

/** The one visitor language of this window. */
export const locale = new Locale();
/** The staff panel's: English, through the same formatting (durations, times of day). */
export const staffLocale = new Locale();
/** `t('live.mute')`: shorthand for `locale.t`. */
export const t = (key: MessageKey, options?: TOptions): string => locale.t(key, options);
/** `th('announce.ready', { name })`: a message about the avatar, in its grammatical gender (`locale.host`). */
export const th = (key: MessageKey, options?: TOptions): string => locale.host(key, options);
