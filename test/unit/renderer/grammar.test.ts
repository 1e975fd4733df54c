/**
 * Messages about the avatar agree with it, in every language: a cast member's grammatical gender
 * (`female`, `male`, `neutral`) picks the catalogue's `<key>_female` / `<key>_male` forms through
 * i18next's context (locale.host / th), and `neutral` gets wording that names no gender where the
 * language has such wording. Through the renderer's own Locale, as the build compiles it.
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AvatarGender, LanguageCode } from '../../../electron/contract.ts';

const { locale, th } = await import('../../../renderer/src/i18n/locale.svelte.ts');
const { announcementFor } = await import('../../../renderer/src/app/announce.ts');

function say(lang: LanguageCode, gender: AvatarGender): { eyebrow: string; ready: string; host: string; speaking: string } {
  locale.set(lang);
  locale.setHostGender(gender);
  const ready = announcementFor({ screen: 'live', name: 'Ava', reconnecting: false, playing: true, muted: false, wrappingUp: false, endedBy: null, error: null }, 'connecting')!.text;
  return { eyebrow: th('attract.eyebrow'), ready, host: th('common.digitalHost'), speaking: th('live.avatarSpeaking', { name: 'Ava' }) };
}

describe('grammatical gender of the avatar', () => {
  after(() => {
    locale.set('en');
    locale.setHostGender('neutral');
  });
  it('es: "lista" for her, "listo" for him, no gendered word when neutral', () => {
    assert.deepEqual(say('es', 'female'), { eyebrow: 'Su anfitriona digital', ready: 'Ava está lista. Empiece a hablar.', host: 'La anfitriona digital', speaking: 'Ava está hablando' });
    assert.deepEqual(say('es', 'male'), { eyebrow: 'Su anfitrión digital', ready: 'Ava está listo. Empiece a hablar.', host: 'El anfitrión digital', speaking: 'Ava está hablando' });
    assert.deepEqual(say('es', 'neutral'), { eyebrow: 'Su asistente digital', ready: 'Ya puede hablar con Ava. Empiece a hablar.', host: 'Asistente digital', speaking: 'Ava está hablando' });
  });
  it('fr: "prête" and "hôtesse" for her, "prêt" and "hôte" for him', () => {
    assert.deepEqual(say('fr', 'female'), { eyebrow: 'Votre hôtesse numérique', ready: 'Ava est prête. Vous pouvez parler.', host: 'L’hôtesse numérique', speaking: 'Ava parle' });
    assert.deepEqual(say('fr', 'male'), { eyebrow: 'Votre hôte numérique', ready: 'Ava est prêt. Vous pouvez parler.', host: 'L’hôte numérique', speaking: 'Ava parle' });
    assert.deepEqual(say('fr', 'neutral'), { eyebrow: 'Votre guide numérique', ready: 'Vous pouvez parler avec Ava.', host: 'Guide numérique', speaking: 'Ava parle' });
  });
  it('de: "Gastgeberin" for her, "Gastgeber" for him, "Begleitung" when neutral', () => {
    assert.deepEqual(say('de', 'female'), { eyebrow: 'Ihre digitale Gastgeberin', ready: 'Ava ist bereit. Sprechen Sie einfach los.', host: 'Die digitale Gastgeberin', speaking: 'Ava spricht' });
    assert.deepEqual(say('de', 'male'), { eyebrow: 'Ihr digitaler Gastgeber', ready: 'Ava ist bereit. Sprechen Sie einfach los.', host: 'Der digitale Gastgeber', speaking: 'Ava spricht' });
    assert.equal(say('de', 'neutral').eyebrow, 'Ihre digitale Begleitung');
  });
  it('ar: feminine agreement for her (جاهزة، تتحدث، مضيفتك); Arabic has no neutral form, so neutral is the masculine', () => {
    assert.deepEqual(say('ar', 'female'), { eyebrow: 'مضيفتك الرقمية', ready: 'Ava جاهزة. ابدأ الحديث.', host: 'المضيفة الرقمية', speaking: 'Ava تتحدث' });
    assert.deepEqual(say('ar', 'male'), { eyebrow: 'مضيفك الرقمي', ready: 'Ava جاهز. ابدأ الحديث.', host: 'المضيف الرقمي', speaking: 'Ava يتحدث' });
    assert.deepEqual(say('ar', 'neutral'), say('ar', 'male'));
  });
  for (const lang of ['en', 'ja', 'zh-Hans'] as const) {
    it(`${lang}: no grammatical gender, the same words for every avatar`, () => {
      assert.deepEqual(say(lang, 'female'), say(lang, 'neutral'));
      assert.deepEqual(say(lang, 'male'), say(lang, 'neutral'));
    });
  }
});
