/** Every catalogue, by language code; `MessageKey` is the typed key set (from the English source). */
import type { LanguageCode } from '../../../../electron/contract.ts';
import en from './en.ts';
import es from './es.ts';
import fr from './fr.ts';
import de from './de.ts';
import zhHans from './zh-Hans.ts';
import ja from './ja.ts';
import ar from './ar.ts';

import type { Catalogue } from './types.ts';

export type { Catalogue };

type Leaves<T, P extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${P}${K}` : Leaves<T[K], `${P}${K}.`>;
}[keyof T & string];
type PluralSuffix = 'zero' | 'one' | 'two' | 'few' | 'many' | 'other';
type WithoutPlural<K> = K extends `${infer Base}_${PluralSuffix}` ? Base : K;

/** Every message key (plural forms under their base key: `t('idle.body', { count })`). */
export type MessageKey = WithoutPlural<Leaves<typeof en>>;

export const CATALOGUES: Record<LanguageCode, Catalogue> = { en, es, fr, de, 'zh-Hans': zhHans, ja, ar };
