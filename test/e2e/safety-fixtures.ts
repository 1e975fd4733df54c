import type { Page } from 'playwright';
import jsQR from 'jsqr';
import { CATALOGUES } from '../../renderer/src/i18n/catalogues/index.ts';
import type { LanguageCode } from '../../electron/contract.ts';
import { screenIs, type KioskPage } from './harness.ts';
import { decodePng } from './contrast.ts';

/** What the safety E2E files (safety*.test.ts) share: what they configure, a venue's privacy notice
 *  (three of the seven languages, so the others show the default language's, marked) and an adult kiosk. */
export const PRIVACY = {
  url: 'https://grand-hotel.example/privacy?kiosk=lobby-1',
  notice: {
    en: 'The Grand Hotel is responsible for this kiosk. The avatar service processes your voice and picture only to make the conversation.',
    de: 'Verantwortlich für diesen Kiosk ist das Grand Hotel. Der Avatar-Dienst verarbeitet Stimme und Bild nur für das Gespräch.',
    ar: 'فندق غراند مسؤول عن هذا الكشك. تعالج خدمة الأفاتار صوتك وصورتك لإجراء المحادثة فقط.',
  },
};
export const ADULT = { audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] } };

/** A catalogue message with its placeholders filled in, as the page shows it. */
export function message(lang: LanguageCode, key: string, values: Record<string, string> = {}): string {
  const [group, name] = key.split('.') as [string, string];
  const text = (CATALOGUES[lang] as unknown as Record<string, Record<string, string>>)[group]![name]!;
  return text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => values[k] ?? `{{${k}}}`);
}

/** The QR code on screen, decoded from a screenshot of it (what a visitor's phone would read): the PNG's
 *  pixels are read in a blank page of the same browser (no image package needed), jsQR reads the code. */
export async function decodeQr(page: Page, selector: string): Promise<string | null> {
  const png = (await page.locator(selector).first().screenshot()).toString('base64');
  const blank = await page.context().newPage();
  try {
    const { width, height, rgba } = (await blank.evaluate(`(async () => {
      ${decodePng(png)}
      return { width: c.width, height: c.height, rgba: Array.from(data) };
    })()`)) as { width: number; height: number; rgba: number[] };
    return jsQR(Uint8ClampedArray.from(rgba), width, height)?.data ?? null;
  } finally {
    await blank.close();
  }
}

/** Clicks from the attract screen until the live screen, counting each (what the visitor taps). */
export async function tapsToLive(page: Page, testIds: string[]): Promise<number> {
  let taps = 0;
  for (const id of testIds) {
    await page.click(`[data-testid=${id}]`);
    taps++;
  }
  await screenIs(page, 'live', 30_000);
  return taps;
}

export const receivedModeration = (k: KioskPage) => k.emulator.listSessions().map((s) => (s.receivedRequest as { moderation?: string }).moderation);

