/**
 * The renderer's language state (i18n/locale.svelte.ts: i18next over the bundled catalogues), the
 * visitor's choices (app/Visitor.svelte.ts), what the live region says (app/announce.ts) and private
 * listening (call/AudioOutput.svelte.ts), compiled as the renderer build compiles them.
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicConfig } from '../../../electron/contract.ts';

const { locale, t, AUTONYMS } = await import('../../../renderer/src/i18n/locale.svelte.ts');
const { Visitor, ACCESSIBLE_TIME_FACTOR } = await import('../../../renderer/src/app/Visitor.svelte.ts');
const { announcementFor, timeAnnouncementFor } = await import('../../../renderer/src/app/announce.ts');
const { AudioOutput, AUDIO_OUTPUT_KEY } = await import('../../../renderer/src/call/AudioOutput.svelte.ts');

describe('locale', () => {
  it('translates, interpolates and picks plural forms by Intl.PluralRules in each language', () => {
    locale.set('en');
    assert.equal(t('idle.body', { count: 1 }), 'The conversation will end in 1 second unless you tap or speak.');
    assert.equal(t('idle.body', { count: 5 }), 'The conversation will end in 5 seconds unless you tap or speak.');
    locale.set('de');
    assert.equal(t('ended.thanks', { name: 'Ava' }), 'Danke für Ihr Gespräch mit Ava');
    assert.equal(t('ended.backIn', { count: 1 }), 'Zurück zum Start in 1 s');
    locale.set('ar');
    assert.equal(locale.dir, 'rtl');
    assert.equal(t('ended.backIn', { count: 2 }), 'العودة إلى البداية بعد ثانيتين');
    assert.equal(t('ended.backIn', { count: 0 }), 'العودة إلى البداية الآن');
    assert.match(t('ended.backIn', { count: 5 }), /ثوانٍ$/); // Arabic "few" (3-10)
    assert.match(t('ended.backIn', { count: 11 }), /ثانية$/); // Arabic "many" (11-99)
    locale.set('ja');
    assert.equal(locale.dir, 'ltr');
    assert.equal(t('idle.body', { count: 3 }), '画面に触れるか話しかけないと、3秒後に会話が終了します。');
    locale.set('en');
  });

  it('formats countdowns, durations and numbers with Intl in the chosen language', () => {
    locale.set('en');
    assert.equal(locale.clock(75), '1:15');
    assert.equal(locale.clock(3725), '1:02:05');
    assert.equal(locale.duration(42), '42 seconds');
    assert.equal(locale.duration(60), '1 minute');
    assert.equal(locale.duration(134), new Intl.ListFormat('en', { type: 'unit', style: 'long' }).format(['2 minutes', '14 seconds']));
    assert.equal(locale.number(1234.5), '1,234.5');
    locale.set('de');
    assert.equal(locale.number(1234.5), '1.234,5');
    assert.equal(locale.duration(1), '1 Sekunde');
    locale.set('fr');
    assert.equal(locale.duration(60), '1 minute');
    locale.set('en');
  });

  it('names every language in itself', () => {
    assert.deepEqual(AUTONYMS, { en: 'English', es: 'Español', fr: 'Français', de: 'Deutsch', 'zh-Hans': '简体中文', ja: '日本語', ar: 'العربية' });
  });
});

const config = (over: Partial<PublicConfig>): PublicConfig =>
  ({ languages: ['en', 'de', 'ar'], defaultLanguage: 'de', accessibility: { default: true, reachBandPercent: 40 }, ...over }) as PublicConfig;

describe('Visitor', () => {
  it('starts from the venue defaults, takes the visitor choices, and resets after the visitor', () => {
    const v = new Visitor();
    v.reset(config({}));
    assert.equal(v.language, 'de');
    assert.equal(v.accessible, true);
    assert.equal(v.reachBandPercent, 40);
    assert.equal(v.timeFactor, ACCESSIBLE_TIME_FACTOR);
    v.setLanguage('ar');
    v.setAccessible(false);
    assert.equal(locale.lang, 'ar');
    assert.equal(v.timeFactor, 1);
    v.setLanguage('ja'); // not offered here: ignored
    assert.equal(v.language, 'ar');
    v.reset(config({}));
    assert.deepEqual([v.language, v.accessible], ['de', true]);
    locale.set('en');
  });
});

describe('announcementFor', () => {
  const base = { screen: 'live' as const, name: 'Ava', reconnecting: false, playing: true, muted: false, wrappingUp: false, endedBy: null, error: null };
  it('says connecting, ready, muted, listening, reconnecting, ended and why', () => {
    locale.set('en');
    assert.deepEqual(announcementFor({ ...base, screen: 'connecting' }, ''), { key: 'connecting', text: 'Connecting to Ava…' });
    assert.deepEqual(announcementFor(base, 'connecting'), { key: 'ready', text: 'Ava is ready. Start talking.' });
    assert.deepEqual(announcementFor({ ...base, muted: true }, 'ready'), { key: 'muted', text: 'Muted' });
    assert.deepEqual(announcementFor(base, 'muted'), { key: 'listening', text: 'Listening.' });
    assert.deepEqual(announcementFor({ ...base, reconnecting: true }, 'listening'), { key: 'reconnecting', text: 'The connection dropped. Reconnecting…' });
    assert.deepEqual(announcementFor(base, 'reconnecting'), { key: 'listening', text: 'Listening.' });
    assert.equal(announcementFor({ ...base, screen: 'ended', wrappingUp: true }, 'ready'), null);
    assert.deepEqual(announcementFor({ ...base, screen: 'ended', endedBy: 'idle' }, 'ready'), { key: 'endedIdle', text: 'The conversation ended because nobody was talking.' });
    assert.deepEqual(announcementFor({ ...base, screen: 'ended', endedBy: 'time' }, 'ready'), { key: 'endedTime', text: 'The conversation ended: the time is up.' });
    const error = { cause: 'credits' as const, copy: 'credits' as const, title: '', body: '', code: 'credit_insufficient' };
    assert.deepEqual(announcementFor({ ...base, screen: 'error', error }, 'ready'), {
      key: 'error:credits',
      text: 'The conversation could not continue: We’re out of conversation time',
    });
    assert.equal(announcementFor({ ...base, screen: 'attract' }, 'ended'), null);
  });
  it('keeps quiet while a live call stops playing to end (it is not "connecting" again)', () => {
    locale.set('en');
    assert.equal(announcementFor({ ...base, playing: false }, 'ready'), null);
    assert.equal(announcementFor({ ...base, playing: false }, 'muted'), null);
    assert.deepEqual(announcementFor({ ...base, playing: false }, 'connecting'), { key: 'connecting', text: 'Connecting to Ava…' });
  });
});

describe('timeAnnouncementFor', () => {
  const clock = { clock: (s: number) => `0:${String(s).padStart(2, '0')}` };
  const at = (remainingS: number | null, idleLeftS: number | null = null, warningS = 30) => timeAnnouncementFor({ screen: 'live', remainingS, warningS, idleLeftS }, clock);
  it('speaks the call\'s warning and the idle prompt\'s last 10 s, with a key each (said once by the caller)', () => {
    locale.set('en');
    assert.equal(at(45), null);
    assert.deepEqual(at(30), { key: 'call:ending', text: 'Ending in 0:30' });
    assert.deepEqual(at(29)?.key, 'call:ending'); // the same moment: not said again
    assert.deepEqual(at(8, null, 0), { key: 'call:ending', text: 'Ending in 0:08' }); // no warning set: the last 10 s
    assert.equal(at(200, 11), null);
    assert.deepEqual(at(200, 10), { key: 'idle:last', text: 'The conversation will end in 10 seconds unless you tap or speak.' });
    assert.equal(timeAnnouncementFor({ screen: 'ended', remainingS: 5, warningS: 30, idleLeftS: null }, clock), null);
  });
});

describe('AudioOutput (private listening)', () => {
  function fakes(outputs: { deviceId: string; label: string }[]) {
    const store = new Map<string, string>();
    const applied: string[] = [];
    const listeners = new Set<() => void>();
    const devices = {
      enumerateDevices: async () => [{ deviceId: 'mic', kind: 'audioinput', label: 'Mic' }, ...outputs.map((o) => ({ ...o, kind: 'audiooutput' }))] as MediaDeviceInfo[],
      addEventListener: (_: string, l: () => void) => void listeners.add(l),
      removeEventListener: (_: string, l: () => void) => void listeners.delete(l),
    } as unknown as Pick<MediaDevices, 'enumerateDevices' | 'addEventListener' | 'removeEventListener'>;
    const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v), removeItem: (k: string) => void store.delete(k) };
    return { store, applied, listeners, devices, storage, apply: async (id: string) => void applied.push(id) };
  }

  it('lists outputs, routes the chosen one, remembers it, and says headphones only while it is plugged in', async () => {
    const f = fakes([
      { deviceId: 'default', label: 'Default' },
      { deviceId: 'hp', label: 'Headphones' },
    ]);
    const out = new AudioOutput({ devices: f.devices, storage: f.storage, apply: f.apply });
    const stop = out.start();
    await out.refresh();
    assert.deepEqual(out.outputs, [{ id: 'hp', label: 'Headphones' }]);
    assert.equal(out.hasPrivateOutput, false);
    await out.choose('hp');
    assert.equal(f.store.get(AUDIO_OUTPUT_KEY), 'hp');
    assert.deepEqual(f.applied, ['', 'hp']);
    assert.equal(out.hasPrivateOutput, true);
    // Unplugged: the hint goes; the choice stays for when it comes back.
    f.devices.enumerateDevices = async () => [];
    await out.refresh();
    assert.equal(out.hasPrivateOutput, false);
    assert.equal(out.chosen, 'hp');
    await out.choose('');
    assert.equal(f.store.has(AUDIO_OUTPUT_KEY), false);
    stop();
    assert.equal(f.listeners.size, 0);
    // A new window starts with the remembered choice.
    f.store.set(AUDIO_OUTPUT_KEY, 'hp');
    assert.equal(new AudioOutput({ devices: f.devices, storage: f.storage, apply: f.apply }).chosen, 'hp');
  });
});
