/**
 * The Visitors tab's state: the kiosk's visitor report (counts only, nothing finer than the hour) and the
 * language the report is read in. The staff panel itself is in English; the venue's manager who reads
 * this tab may not be, so the report alone can be switched to any of the kiosk's languages (its own
 * Locale: the rest of the panel is not affected). The figures come from visitor-report.ts.
 */
import type { KioskApi, Result } from '../../../electron/contract.ts';
import { LANGUAGE_CODES, type LanguageCode } from '../../../electron/core/languages.ts';
import { Locale } from '../i18n/locale.svelte.ts';
import { StaffValue, type StaffCalls } from './calls.svelte.ts';
import { formatFor, type ReportFormat, type VisitorReport } from './visitor-report.ts';

export class Visitors extends StaffValue<VisitorReport> {
  readonly #locale = new Locale();
  readonly #format = $derived.by(() => {
    const locale = this.#locale;
    return formatFor(locale.lang, (key, options) => locale.t(key, options));
  });

  constructor(calls: StaffCalls, fetch: (staff: KioskApi['staff']) => Promise<Result<VisitorReport>>) {
    super(calls, fetch);
  }

  /** Null until loaded. */
  get report(): VisitorReport | null {
    return this.value;
  }

  get lang(): LanguageCode {
    return this.#locale.lang;
  }
  get dir(): 'ltr' | 'rtl' {
    return this.#locale.dir;
  }
  set lang(lang: LanguageCode) {
    if ((LANGUAGE_CODES as readonly string[]).includes(lang)) this.#locale.set(lang);
  }

  /** The panel closed: the report and the language chosen for it are forgotten (the next person starts in English). */
  override clear(): void {
    super.clear();
    this.#locale.set('en');
  }

  /** Words, numbers and hours in the report's language. */
  get format(): ReportFormat {
    return this.#format;
  }
}
