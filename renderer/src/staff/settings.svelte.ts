/**
 * The Settings tab's state: the form (a draft of every editable config.json key), the messages per field
 * (the form's own checks first, then main's schema on save), the avatar picture picked as a file (→ a
 * data: URI), and the write-only API key. The Voices tab saves the voice through the same form.
 */
import type { EditableSettings, ErrorInfo, StaffSettings } from '../../../electron/contract.ts';
import type { StaffCalls } from './calls.svelte.ts';

/** The largest avatar picture the file picker accepts (it travels as a data: URI). */
export const MAX_PICTURE_BYTES = 10 * 1024 * 1024;

/** The settings form: the editable settings plus the text of number fields as typed. */
export type SettingsDraft = EditableSettings;

export interface SettingsFormDeps {
  calls: StaffCalls;
  /** Settings were saved: reload what the kiosk shows (attract screen name, picture, mode). */
  onSettingsSaved: () => void | Promise<void>;
  /** Whether this host can restart the kiosk (browser mode cannot: "after a restart" would point nowhere). */
  canRestart?: () => boolean;
}

export class SettingsForm {
  readonly #deps: SettingsFormDeps;
  #staffSettings = $state<StaffSettings | null>(null);
  draft = $state<SettingsDraft | null>(null);
  #fieldErrors = $state<Record<string, string>>({});
  #saveMessage = $state<string | null>(null);
  apiKeyDraft = $state('');
  #pickedPicture = $state<string | null>(null);

  constructor(deps: SettingsFormDeps) {
    this.#deps = deps;
  }

  /** Main's settings as last loaded or saved (null until loaded). */
  get staffSettings(): StaffSettings | null {
    return this.#staffSettings;
  }
  get fieldErrors(): Record<string, string> {
    return this.#fieldErrors;
  }
  get saveMessage(): string | null {
    return this.#saveMessage;
  }
  /** What the form's data: URI picture is: the picked file's name and size, or the stored picture. */
  get pickedPicture(): string | null {
    return this.draft?.avatar.imagePath.startsWith('data:') ? (this.#pickedPicture ? `Picked: ${this.#pickedPicture}` : 'The picture stored in the settings') : null;
  }

  async load(): Promise<ErrorInfo | null> {
    const r = await this.#deps.calls.call((s) => s.getSettings());
    if (r.ok) this.loadSettings(r.value);
    return r.ok ? null : r.error;
  }

  /** Fill the form from main's settings (the messages and the picked file are forgotten). */
  loadSettings(s: StaffSettings): void {
    this.#staffSettings = s;
    this.draft = $state.snapshot(s.settings) as SettingsDraft;
    this.#fieldErrors = {};
    this.#pickedPicture = null;
  }

  /** Save the settings form; per-field messages come back from main's schema. */
  async save(): Promise<boolean> {
    const draft = this.draft;
    if (!draft) return false;
    this.#saveMessage = null;
    const local = localFieldErrors(draft);
    if (Object.keys(local).length) {
      this.#fieldErrors = local;
      this.#saveMessage = 'Some settings need fixing (see the messages in red).';
      return false;
    }
    const r = await this.#deps.calls.call((s) => s.saveSettings({ settings: cleanSettings(draft) }));
    if (!r.ok) {
      this.#saveMessage = r.error.message;
      return false;
    }
    if (!r.value.saved) {
      this.#fieldErrors = r.value.fieldErrors;
      this.#saveMessage = 'Some settings need fixing (see the messages in red).';
      return false;
    }
    this.loadSettings(r.value.settings);
    const restartHint = (this.#deps.canRestart?.() ?? true) ? 'Some changes apply after a restart (System tab).' : 'Some changes apply when the kiosk is next started.';
    this.#saveMessage = r.value.restartRequired ? `Saved. ${restartHint}` : 'Saved. The kiosk uses the new settings now.';
    // The key belongs to the old service address; saying so keeps staff from wondering why calls stopped.
    if (r.value.apiKeyCleared) this.#saveMessage += ' The service address changed, so the stored API key was removed: enter the key again.';
    await this.#deps.onSettingsSaved();
    return true;
  }

  /** Write-only API key: set the typed key, or clear the stored one (null). */
  async setApiKey(clear = false): Promise<void> {
    const apiKey = clear ? null : this.apiKeyDraft.trim();
    if (apiKey !== null && apiKey.length < 8) {
      this.#fieldErrors = { ...this.#fieldErrors, apiKey: 'The key is too short (at least 8 characters).' };
      return;
    }
    const r = await this.#deps.calls.call((s) => s.setApiKey({ apiKey }));
    this.apiKeyDraft = '';
    if (!r.ok) {
      this.#fieldErrors = { ...this.#fieldErrors, apiKey: r.error.message };
      return;
    }
    const { apiKey: _dropped, ...rest } = this.#fieldErrors;
    this.#fieldErrors = rest;
    this.#staffSettings = r.value;
    this.#saveMessage = clear ? 'The stored key was cleared.' : 'The key was saved (it cannot be shown again).';
    await this.#deps.onSettingsSaved();
  }

  /** A picked picture file → data: URI in the form (type and size checked first). */
  async pickPicture(file: { name: string; type: string; size: number; arrayBuffer(): Promise<ArrayBuffer> }): Promise<void> {
    const draft = this.draft;
    if (!draft) return;
    if (!/^image\/(png|jpeg|webp)$/.test(file.type)) {
      this.#fieldErrors = { ...this.#fieldErrors, 'avatar.imagePath': 'Pick a PNG, JPEG or WEBP picture.' };
      return;
    }
    if (file.size > MAX_PICTURE_BYTES) {
      this.#fieldErrors = { ...this.#fieldErrors, 'avatar.imagePath': `That picture is ${megabytes(file.size)}; pick one under ${megabytes(MAX_PICTURE_BYTES)}.` };
      return;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    draft.avatar.imagePath = `data:${file.type};base64,${toBase64(bytes)}`;
    const { ['avatar.imagePath']: _dropped, ...rest } = this.#fieldErrors;
    this.#fieldErrors = rest;
    this.#pickedPicture = `${file.name} (${megabytes(file.size)})`;
  }

  /** Forget the form (the panel locked or closed). The picked file's name stays until the next load. */
  clear(): void {
    this.#staffSettings = null;
    this.draft = null;
    this.#fieldErrors = {};
    this.#saveMessage = null;
    this.apiKeyDraft = '';
  }
}

// ---------------------------------------------------------------------------------------------------
// Pure helpers (exported for tests)

const NUMBER_FIELDS: Array<[string, (s: SettingsDraft) => number | undefined]> = [
  ['window.width', (s) => s.window.width],
  ['window.height', (s) => s.window.height],
  ['returnToAttractSeconds', (s) => s.returnToAttractSeconds],
  ['countdownWarningSeconds', (s) => s.countdownWarningSeconds],
  ['idle.promptSeconds', (s) => s.idle.promptSeconds],
  ['idle.hangupSeconds', (s) => s.idle.hangupSeconds],
  ['maxCallSeconds', (s) => s.maxCallSeconds],
];

/** What the form can tell before asking main: numbers that are not numbers, an empty name. */
export function localFieldErrors(s: SettingsDraft): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [key, get] of NUMBER_FIELDS) {
    const v = get(s) as number | null | undefined;
    if ((v === undefined || v === null) && key === 'maxCallSeconds') continue; // optional: empty = none
    if (typeof v !== 'number' || !Number.isFinite(v)) errors[key] = 'Enter a number.';
  }
  if (!s.avatar.name.trim()) errors['avatar.name'] = 'Give the avatar a name.';
  return errors;
}

/** Drop empty optional strings and an empty maximum call length before saving. */
export function cleanSettings(s: SettingsDraft): EditableSettings {
  const out = $state.snapshot(s) as EditableSettings; // a deep copy (the form's draft is a proxy)
  if (!out.service.baseUrl?.trim()) delete out.service.baseUrl;
  if (!out.service.gatewayUrl?.trim()) delete out.service.gatewayUrl;
  if (out.avatar.persona !== undefined && !out.avatar.persona.trim()) delete out.avatar.persona;
  const max = out.maxCallSeconds as number | null | undefined; // an emptied number input gives null/undefined
  if (max === undefined || max === null || Number.isNaN(max)) delete out.maxCallSeconds;
  if (out.moderation === undefined) delete out.moderation;
  if (out.extraMotion === undefined) delete out.extraMotion;
  if (!out.region?.trim()) delete out.region;
  else out.region = out.region.trim().toUpperCase();
  return out;
}

export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}
