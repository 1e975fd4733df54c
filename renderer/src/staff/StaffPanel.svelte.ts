/**
 * The staff panel's state (issue 6 §1): the hidden way in (long-press the top-left corner for 3 s, or
 * Ctrl+Shift+S / Ctrl+Alt+K), the PIN pad (first use: choose and confirm a PIN; wrong tries; lock-out),
 * and the tabs (Status, Settings, Voices, Diagnostics, Ledger, Logs, System). Main holds the PIN hash,
 * the unlock and every secret; this class only asks it (`window.kiosk.staff`) and shows the answers.
 *
 * Rules kept here: the panel never opens while a call is active (`canOpen`), it closes itself after
 * 60 s without input, and any staff call that answers `unauthorized` (main forgot the unlock) returns
 * to the PIN pad. Timers run on an injected clock; `dispose()` leaves none.
 */
import type {
  DoctorReport,
  EditableSettings,
  ErrorInfo,
  KioskApi,
  LedgerTotals,
  PinState,
  Result,
  StaffSettings,
  StaffStatus,
  VoiceList,
} from '../../../electron/contract.ts';
import { browserClock, type RendererClock } from '../sensing/clock.ts';

export type StaffView = 'closed' | 'pin' | 'panel';
/** `enter`: type the PIN; `choose`/`confirm`: first use. */
export type PinStep = 'enter' | 'choose' | 'confirm';
export type StaffTab = 'status' | 'settings' | 'voices' | 'diagnostics' | 'ledger' | 'logs' | 'system';

export const STAFF_TABS: ReadonlyArray<{ id: StaffTab; label: string }> = [
  { id: 'status', label: 'Status' },
  { id: 'settings', label: 'Settings' },
  { id: 'voices', label: 'Voices' },
  { id: 'diagnostics', label: 'Diagnostics' },
  { id: 'ledger', label: 'Ledger' },
  { id: 'logs', label: 'Logs' },
  { id: 'system', label: 'System' },
];

export const LONG_PRESS_MS = 3_000;
/** Input without staff calls refreshes main's unlock this often (main forgets it after 60 s). */
export const KEEP_ALIVE_MS = 20_000;
export const INACTIVITY_CLOSE_MS = 60_000;
export const PIN_MIN = 4;
export const PIN_MAX = 8;
/** The largest avatar picture the file picker accepts (it travels as a data: URI). */
export const MAX_PICTURE_BYTES = 10 * 1024 * 1024;

export interface StaffPanelDeps {
  staff: KioskApi['staff'] | null;
  /** False while a call is active: the panel must not open then. */
  canOpen: () => boolean;
  /** Settings were saved: reload what the kiosk shows (attract screen name, picture, mode). */
  onSettingsSaved: () => void | Promise<void>;
  clock?: RendererClock;
}

/** The settings form: the editable settings plus the text of number fields as typed. */
export type SettingsDraft = EditableSettings;

export class StaffPanel {
  readonly #deps: StaffPanelDeps;
  readonly #clock: RendererClock;
  #view = $state<StaffView>('closed');
  #pinStep = $state<PinStep>('enter');
  #pin = $state('');
  #chosenPin = '';
  #pinMessage = $state<string | null>(null);
  #lockedUntilMs = $state<number | null>(null);
  #attemptsLeft = $state<number | null>(null);
  #busy = $state(false);
  #now = $state(0);
  #tab = $state<StaffTab>('status');
  #notice = $state<string | null>(null);
  #pressTimer: unknown = null;
  #idleTimer: unknown = null;
  #lockTicker: unknown = null;

  // Tab data (null until loaded).
  #status = $state<StaffStatus | null>(null);
  #staffSettings = $state<StaffSettings | null>(null);
  draft = $state<SettingsDraft | null>(null);
  #fieldErrors = $state<Record<string, string>>({});
  #saveMessage = $state<string | null>(null);
  apiKeyDraft = $state('');
  #voices = $state<VoiceList | null>(null);
  clone = $state({ audioUrl: '', voice: '', language: '' });
  #cloneMessage = $state<string | null>(null);
  #doctor = $state<DoctorReport | null>(null);
  #ledger = $state<LedgerTotals | null>(null);
  #logs = $state<string[] | null>(null);
  #tabError = $state<string | null>(null);

  constructor(deps: StaffPanelDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? browserClock;
    this.#now = this.#clock.now();
  }

  // -------------------------------------------------------------------------------------------------
  // What the components read

  get view(): StaffView {
    return this.#view;
  }
  get isOpen(): boolean {
    return this.#view !== 'closed';
  }
  get pinStep(): PinStep {
    return this.#pinStep;
  }
  /** How many digits are typed (the pad shows dots, never the digits). */
  get pinLength(): number {
    return this.#pin.length;
  }
  get pinMessage(): string | null {
    return this.#pinMessage;
  }
  /** Whole seconds the pad stays locked (null when not locked). */
  get lockedForS(): number | null {
    if (this.#lockedUntilMs === null) return null;
    const left = Math.ceil((this.#lockedUntilMs - this.#now) / 1000);
    return left > 0 ? left : null;
  }
  get attemptsLeft(): number | null {
    return this.#attemptsLeft;
  }
  get busy(): boolean {
    return this.#busy;
  }
  get tab(): StaffTab {
    return this.#tab;
  }
  /** A one-line message about the last action (saved, exported…). */
  get notice(): string | null {
    return this.#notice;
  }
  get status(): StaffStatus | null {
    return this.#status;
  }
  get staffSettings(): StaffSettings | null {
    return this.#staffSettings;
  }
  get fieldErrors(): Record<string, string> {
    return this.#fieldErrors;
  }
  get saveMessage(): string | null {
    return this.#saveMessage;
  }
  get voices(): VoiceList | null {
    return this.#voices;
  }
  get cloneMessage(): string | null {
    return this.#cloneMessage;
  }
  get doctor(): DoctorReport | null {
    return this.#doctor;
  }
  get ledger(): LedgerTotals | null {
    return this.#ledger;
  }
  get logs(): string[] | null {
    return this.#logs;
  }
  /** The current tab could not load (a human sentence, never a stack). */
  get tabError(): string | null {
    return this.#tabError;
  }

  // -------------------------------------------------------------------------------------------------
  // The way in

  /** The top-left corner is pressed: open after LONG_PRESS_MS unless released first. */
  cornerDown(): void {
    this.cornerUp();
    if (this.isOpen) return;
    this.#pressTimer = this.#clock.setTimeout(() => {
      this.#pressTimer = null;
      void this.open();
    }, LONG_PRESS_MS);
  }

  cornerUp(): void {
    if (this.#pressTimer !== null) this.#clock.clearTimeout(this.#pressTimer);
    this.#pressTimer = null;
  }

  /** Ctrl+Shift+S or Ctrl+Alt+K opens; keys typed into an open pad go to it. Returns true if handled. */
  handleKey(event: { key: string; ctrlKey: boolean; shiftKey: boolean; altKey: boolean; metaKey?: boolean }): boolean {
    const key = event.key.toLowerCase();
    const shortcut = event.ctrlKey && ((event.shiftKey && key === 's') || (event.altKey && key === 'k'));
    if (shortcut) {
      if (!this.isOpen) void this.open();
      return true;
    }
    if (!this.isOpen) return false;
    this.activity();
    if (key === 'escape') {
      void this.close();
      return true;
    }
    if (this.#view === 'pin') {
      if (/^[0-9]$/.test(event.key)) this.pressDigit(event.key);
      else if (key === 'backspace') this.backspace();
      else if (key === 'enter') void this.submitPin();
      else return false;
      return true;
    }
    return false;
  }

  /** Open the PIN pad (ignored while a call is active). */
  async open(): Promise<void> {
    if (this.isOpen || !this.#deps.canOpen()) return;
    this.#view = 'pin';
    this.#resetPin(null);
    this.#armInactivity();
    const state = await this.#call((s) => s.pinState());
    if (!state.ok) {
      this.#pinMessage = state.error.message;
      return;
    }
    this.#applyPinState(state.value);
    this.#pinStep = state.value.pinSet ? 'enter' : 'choose';
    if (state.value.unlocked) this.#enterPanel();
  }

  /** Close (main forgets the unlock). */
  async close(): Promise<void> {
    if (!this.isOpen) return;
    this.#view = 'closed';
    this.#clearTimers();
    this.#resetPin(null);
    this.#clearTabData();
    await this.#deps.staff?.lock();
  }

  /**
   * Any input inside the panel: the 60 s inactivity clock restarts. Main forgets the unlock 60 s after
   * the last staff CALL, so while someone is busy typing (no calls) a light keep-alive goes out at most
   * every KEEP_ALIVE_MS; otherwise a long form would bounce back to the PIN pad on save.
   */
  activity(): void {
    if (!this.isOpen) return;
    this.#armInactivity();
    if (this.#view === 'panel' && this.#clock.now() - this.#lastCallMs >= KEEP_ALIVE_MS) void this.#call((s) => s.status(), { quiet: true });
  }

  // -------------------------------------------------------------------------------------------------
  // PIN pad

  pressDigit(digit: string): void {
    if (!/^[0-9]$/.test(digit) || this.#pin.length >= PIN_MAX || this.lockedForS !== null) return;
    this.#pin += digit;
    this.#pinMessage = null;
  }

  backspace(): void {
    this.#pin = this.#pin.slice(0, -1);
  }

  clearPin(): void {
    this.#pin = '';
  }

  async submitPin(): Promise<void> {
    if (this.#busy || this.#view !== 'pin' || this.lockedForS !== null) return;
    const pin = this.#pin;
    if (pin.length < PIN_MIN) {
      this.#pinMessage = `The PIN has ${PIN_MIN} to ${PIN_MAX} digits.`;
      return;
    }
    this.#pin = '';
    if (this.#pinStep === 'choose') {
      this.#chosenPin = pin;
      this.#pinStep = 'confirm';
      this.#pinMessage = null;
      return;
    }
    if (this.#pinStep === 'confirm') {
      if (pin !== this.#chosenPin) {
        this.#chosenPin = '';
        this.#pinStep = 'choose';
        this.#pinMessage = 'The two PINs were different. Choose a PIN again.';
        return;
      }
      this.#chosenPin = '';
      const set = await this.#call((s) => s.setPin({ pin }));
      if (!set.ok) {
        this.#pinStep = 'choose';
        this.#pinMessage = set.error.message;
        return;
      }
      this.#applyPinState(set.value);
      if (set.value.unlocked) {
        this.#enterPanel();
        return;
      }
    }
    const res = await this.#call((s) => s.unlock({ pin }));
    if (res.ok) {
      this.#applyPinState(res.value);
      this.#enterPanel();
      return;
    }
    // Wrong or locked: main's message says tries left / seconds left; the pad state makes it exact.
    const state = await this.#call((s) => s.pinState());
    if (state.ok) this.#applyPinState(state.value);
    if (res.error.code === 'locked' || this.lockedForS !== null) {
      this.#pinMessage = 'Too many wrong tries.';
    } else if (res.error.code === 'unauthorized') {
      const left = this.#attemptsLeft;
      this.#pinMessage = left !== null ? `Wrong PIN. ${left} ${left === 1 ? 'try' : 'tries'} left.` : res.error.message;
    } else {
      this.#pinMessage = res.error.message;
    }
  }

  // -------------------------------------------------------------------------------------------------
  // Tabs

  async setTab(tab: StaffTab): Promise<void> {
    this.#tab = tab;
    this.#tabError = null;
    this.#notice = null;
    await this.refresh();
  }

  /** (Re)load the current tab's data. */
  async refresh(): Promise<void> {
    if (this.#view !== 'panel') return;
    const tab = this.#tab;
    const fail = (e: ErrorInfo) => {
      if (this.#tab === tab) this.#tabError = e.message;
    };
    switch (tab) {
      case 'status': {
        const r = await this.#call((s) => s.status());
        if (r.ok) this.#status = r.value;
        else fail(r.error);
        break;
      }
      case 'settings': {
        const r = await this.#call((s) => s.getSettings());
        if (r.ok) this.#loadSettings(r.value);
        else fail(r.error);
        break;
      }
      case 'voices': {
        const [v, st] = await Promise.all([this.#call((s) => s.listVoices()), this.#staffSettings ? null : this.#call((s) => s.getSettings())]);
        if (v.ok) this.#voices = v.value;
        else fail(v.error);
        if (st?.ok) this.#loadSettings(st.value);
        break;
      }
      case 'diagnostics': {
        this.#doctor = null;
        const r = await this.#call((s) => s.runDoctor());
        if (r.ok) this.#doctor = r.value;
        else fail(r.error);
        break;
      }
      case 'ledger': {
        const r = await this.#call((s) => s.ledgerTotals());
        if (r.ok) this.#ledger = r.value;
        else fail(r.error);
        break;
      }
      case 'logs': {
        const r = await this.#call((s) => s.logTail());
        if (r.ok) this.#logs = r.value.lines;
        else fail(r.error);
        break;
      }
      case 'system': {
        const r = await this.#call((s) => s.status());
        if (r.ok) this.#status = r.value;
        else fail(r.error);
        break;
      }
    }
  }

  /** Save the settings form; per-field messages come back from main's schema. */
  async saveSettings(): Promise<boolean> {
    const draft = this.draft;
    if (!draft) return false;
    this.#saveMessage = null;
    const local = localFieldErrors(draft);
    if (Object.keys(local).length) {
      this.#fieldErrors = local;
      this.#saveMessage = 'Some settings need fixing (see the messages in red).';
      return false;
    }
    const r = await this.#call((s) => s.saveSettings({ settings: cleanSettings(draft) }));
    if (!r.ok) {
      this.#saveMessage = r.error.message;
      return false;
    }
    if (!r.value.saved) {
      this.#fieldErrors = r.value.fieldErrors;
      this.#saveMessage = 'Some settings need fixing (see the messages in red).';
      return false;
    }
    this.#loadSettings(r.value.settings);
    this.#saveMessage = r.value.restartRequired ? 'Saved. Some changes apply after a restart (System tab).' : 'Saved. The kiosk uses the new settings now.';
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
    const r = await this.#call((s) => s.setApiKey({ apiKey }));
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
  #pickedPicture = $state<string | null>(null);
  /** What the form's data: URI picture is: the picked file's name and size, or the stored picture. */
  get pickedPicture(): string | null {
    return this.draft?.avatar.imagePath.startsWith('data:') ? (this.#pickedPicture ? `Picked: ${this.#pickedPicture}` : 'The picture stored in the settings') : null;
  }

  /** Make `voice` the avatar's voice (saved at once). */
  async pickVoice(voice: string): Promise<void> {
    if (!this.draft) {
      const st = await this.#call((s) => s.getSettings());
      if (!st.ok) return;
      this.#loadSettings(st.value);
    }
    if (!this.draft) return;
    this.draft.avatar.voice = voice;
    if (await this.saveSettings()) {
      if (this.#voices) this.#voices = { ...this.#voices, current: voice };
      this.#notice = `The avatar now speaks with “${voice}”.`;
    } else {
      this.#notice = this.#fieldErrors['avatar.voice'] ?? this.#saveMessage;
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
    const r = await this.#call((s) => s.cloneVoice({ audioUrl: audioUrl.trim(), voice: voice.trim(), ...(language.trim() ? { language: language.trim() } : {}) }));
    if (!r.ok) {
      this.#cloneMessage = r.error.message;
      return;
    }
    this.#cloneMessage = `The voice “${r.value.voice}” is ready. Pick it below to use it.`;
    this.clone = { audioUrl: '', voice: '', language: '' };
    const v = await this.#call((s) => s.listVoices());
    if (v.ok) this.#voices = v.value;
  }

  /** The ledger as CSV (the component turns it into a download). */
  async exportCsv(since?: string): Promise<{ fileName: string; csv: string } | null> {
    const r = await this.#call((s) => s.ledgerCsv(since ? { since } : {}));
    if (!r.ok) {
      this.#notice = r.error.message;
      return null;
    }
    this.#notice = `Exported ${r.value.fileName}.`;
    return r.value;
  }

  async setOpenAtLogin(enabled: boolean): Promise<void> {
    const r = await this.#call((s) => s.setOpenAtLogin({ enabled }));
    this.#notice = r.ok ? (enabled ? 'The kiosk will start when this computer starts.' : 'The kiosk will no longer start by itself.') : r.error.message;
    if (r.ok && this.#status) this.#status = { ...this.#status, openAtLogin: enabled };
  }

  async exitKiosk(): Promise<void> {
    const r = await this.#call((s) => s.exitKiosk());
    this.#notice = r.ok ? 'Closing the kiosk…' : r.error.message;
  }

  async restart(): Promise<void> {
    const r = await this.#call((s) => s.restart());
    this.#notice = r.ok ? 'Restarting…' : r.error.message;
  }

  /** Release every timer (the app is going away). */
  dispose(): void {
    this.#clearTimers();
    this.cornerUp();
  }

  // -------------------------------------------------------------------------------------------------

  /** Every staff call goes through here: busy flag, input clock, and `unauthorized` → back to the pad. */
  async #call<T>(fn: (staff: KioskApi['staff']) => Promise<Result<T>>, options: { quiet?: boolean } = {}): Promise<Result<T>> {
    const staff = this.#deps.staff;
    if (!staff) return { ok: false, error: { code: 'internal', message: 'The staff panel needs the kiosk app.' } };
    this.#lastCallMs = this.#clock.now();
    if (!options.quiet) this.#busy = true;
    try {
      const r = await fn(staff);
      if (!r.ok && r.error.code === 'unauthorized' && this.#view === 'panel') {
        // Main forgot the unlock (60 s without a staff call): ask for the PIN again.
        this.#view = 'pin';
        this.#pinStep = 'enter';
        this.#resetPin('The panel locked itself. Enter the PIN again.');
        this.#clearTabData();
      }
      return r;
    } finally {
      if (!options.quiet) this.#busy = false;
    }
  }
  #lastCallMs = 0;

  #enterPanel(): void {
    this.#view = 'panel';
    this.#resetPin(null);
    this.#armInactivity();
    void this.setTab('status');
  }

  #applyPinState(state: PinState): void {
    this.#attemptsLeft = state.attemptsLeft;
    this.#now = this.#clock.now();
    this.#lockedUntilMs = state.lockedForMs > 0 ? this.#now + state.lockedForMs : null;
    if (this.#lockedUntilMs !== null) this.#tickLock();
  }

  /** Count the lock-out down once a second. */
  #tickLock(): void {
    if (this.#lockTicker !== null) return;
    this.#lockTicker = this.#clock.setTimeout(() => {
      this.#lockTicker = null;
      this.#now = this.#clock.now();
      if (this.lockedForS !== null && this.isOpen) this.#tickLock();
      else if (this.#lockedUntilMs !== null) {
        this.#lockedUntilMs = null;
        if (this.#view === 'pin') this.#pinMessage = null;
      }
    }, 1_000);
  }

  #resetPin(message: string | null): void {
    this.#pin = '';
    this.#chosenPin = '';
    this.#pinMessage = message;
  }

  #armInactivity(): void {
    if (this.#idleTimer !== null) this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = this.#clock.setTimeout(() => {
      this.#idleTimer = null;
      void this.close();
    }, INACTIVITY_CLOSE_MS);
  }

  #clearTimers(): void {
    for (const t of [this.#idleTimer, this.#lockTicker]) if (t !== null) this.#clock.clearTimeout(t);
    this.#idleTimer = this.#lockTicker = null;
  }

  #loadSettings(s: StaffSettings): void {
    this.#staffSettings = s;
    this.draft = $state.snapshot(s.settings) as SettingsDraft;
    this.#fieldErrors = {};
    this.#pickedPicture = null;
  }

  #clearTabData(): void {
    this.#status = null;
    this.#staffSettings = null;
    this.draft = null;
    this.#fieldErrors = {};
    this.#saveMessage = null;
    this.apiKeyDraft = '';
    this.#voices = null;
    this.#cloneMessage = null;
    this.#doctor = null;
    this.#ledger = null;
    this.#logs = null;
    this.#tabError = null;
    this.#notice = null;
    this.#tab = 'status';
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
