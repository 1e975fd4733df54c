/**
 * The Voices tab's state: the voices main knows (built-in and custom), picking the avatar's voice (saved
 * at once through the settings form, so main's schema checks it like any other setting), and cloning a
 * new voice from a sample's link.
 */
import type { ErrorInfo, VoiceList } from '../../../electron/contract.ts';
import type { StaffCalls } from './calls.svelte.ts';
import type { SettingsForm } from './settings.svelte.ts';

export class Voices {
  readonly #calls: StaffCalls;
  readonly #settings: SettingsForm;
  #voices = $state<VoiceList | null>(null);
  /** The clone form, as typed. */
  clone = $state({ audioUrl: '', voice: '', language: '' });
  #cloneMessage = $state<string | null>(null);

  constructor(calls: StaffCalls, settings: SettingsForm) {
    this.#calls = calls;
    this.#settings = settings;
  }

  /** Null until loaded. */
  get voices(): VoiceList | null {
    return this.#voices;
  }
  get cloneMessage(): string | null {
    return this.#cloneMessage;
  }

  /** The voice list, and the settings too when they are not loaded yet (picking a voice saves them). */
  async load(): Promise<ErrorInfo | null> {
    const [v, st] = await Promise.all([this.#calls.call((s) => s.listVoices()), this.#settings.staffSettings ? null : this.#calls.call((s) => s.getSettings())]);
    if (v.ok) this.#voices = v.value;
    if (st?.ok) this.#settings.loadSettings(st.value);
    return v.ok ? null : v.error;
  }

  /** Make `voice` the avatar's voice (saved at once). */
  async pickVoice(voice: string): Promise<void> {
    const settings = this.#settings;
    if (!settings.draft) {
      const st = await this.#calls.call((s) => s.getSettings());
      if (!st.ok) return;
      settings.loadSettings(st.value);
    }
    if (!settings.draft) return;
    settings.draft.avatar.voice = voice;
    if (await settings.save()) {
      if (this.#voices) this.#voices = { ...this.#voices, current: voice };
      this.#calls.notice = `The avatar now speaks with “${voice}”.`;
    } else {
      this.#calls.notice = settings.fieldErrors['avatar.voice'] ?? settings.saveMessage;
    }
  }

  async cloneVoice(): Promise<void> {
    const { audioUrl, voice, language } = this.clone;
    if (!/^https?:\/\/\S+$/i.test(audioUrl.trim())) {
      this.#cloneMessage = 'Give the link (http or https) to an mp3 or wav sample.';
      return;
    }
    if (!voice.trim()) {
      this.#cloneMessage = 'Give the new voice a name.';
      return;
    }
    this.#cloneMessage = 'Cloning…';
    const r = await this.#calls.call((s) => s.cloneVoice({ audioUrl: audioUrl.trim(), voice: voice.trim(), ...(language.trim() ? { language: language.trim() } : {}) }));
    if (!r.ok) {
      this.#cloneMessage = r.error.message;
      return;
    }
    this.#cloneMessage = `The voice “${r.value.voice}” is ready. Pick it below to use it.`;
    this.clone = { audioUrl: '', voice: '', language: '' };
    const v = await this.#calls.call((s) => s.listVoices());
    if (v.ok) this.#voices = v.value;
  }

  /** Forget the list and the last message (the panel locked or closed); the clone form stays as typed. */
  clear(): void {
    this.#voices = null;
    this.#cloneMessage = null;
  }
}
