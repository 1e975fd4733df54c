/**
 * The staff panel's state: the hidden way in (long-press the top-left corner for 3 s, or
 * Ctrl+Shift+S / Ctrl+Alt+K), the PIN pad (first use: choose and confirm a PIN; wrong tries; lock-out),
 * and the tabs (Status, Settings, Voices, Diagnostics, Ledger, Visitors, Logs, System). Main holds the PIN hash,
 * the unlock and every secret; this class only asks it (`window.kiosk.staff`) and shows the answers.
 *
 * Rules kept here: the panel never opens while a call is active (`canOpen`), it closes itself after
 * 60 s without input, and any staff call that answers `unauthorized` (main forgot the unlock) returns
 * to the PIN pad. Timers run on an injected clock; `dispose()` leaves none.
 *
 * This class is the composition the components talk to: the PIN pad's state is `pin.svelte.ts`, each
 * tab's is its own file (status, settings, voices, diagnostics, ledger, visitors, logs, system), and every staff
 * call goes through `calls.svelte.ts`.
 */
import type { DoctorReport, ErrorInfo, KioskApi, LedgerTotals, StaffSettings, StaffStatus, VoiceList } from '../../../electron/contract.ts';
import { browserClock, type RendererClock } from '../sensing/clock.ts';
import { StaffCalls } from './calls.svelte.ts';
import { NetworkCheckRun, type NetworkCheckDeps } from './network-check.svelte.ts';
import { WireReportRun } from './wire-report.svelte.ts';
import type { LiveView } from '../rtc/engine.ts';
import { PinEntry, type PinStep } from './pin.svelte.ts';
import { KioskStatus } from './status.svelte.ts';
import { SettingsForm, type SettingsDraft } from './settings.svelte.ts';
import { Voices } from './voices.svelte.ts';
import { Doctor } from './diagnostics.svelte.ts';
import { Ledger } from './ledger.svelte.ts';
import { Visitors } from './visitors.svelte.ts';
import { LogTail } from './logs.svelte.ts';
import { SystemActions } from './system.svelte.ts';

export { PIN_MIN, NEW_PIN_MIN, PIN_MAX, type PinStep } from './pin.svelte.ts';
export { MAX_PICTURE_BYTES, localFieldErrors, cleanSettings, megabytes, type SettingsDraft } from './settings.svelte.ts';

export type StaffView = 'closed' | 'pin' | 'panel';
export type StaffTab = 'status' | 'settings' | 'voices' | 'diagnostics' | 'ledger' | 'visitors' | 'logs' | 'system';

export const STAFF_TABS: ReadonlyArray<{ id: StaffTab; label: string }> = [
  { id: 'status', label: 'Status' },
  { id: 'settings', label: 'Settings' },
  { id: 'voices', label: 'Voices' },
  { id: 'diagnostics', label: 'Diagnostics' },
  { id: 'ledger', label: 'Ledger' },
  { id: 'visitors', label: 'Visitors' },
  { id: 'logs', label: 'Logs' },
  { id: 'system', label: 'System' },
];

export const LONG_PRESS_MS = 3_000;
/** Input without staff calls refreshes main's unlock this often (main forgets it after 60 s). */
export const KEEP_ALIVE_MS = 20_000;
export const INACTIVITY_CLOSE_MS = 60_000;

export interface StaffPanelDeps {
  staff: KioskApi['staff'] | null;
  /** False while a call is active: the panel must not open then. */
  canOpen: () => boolean;
  /** Settings were saved: reload what the kiosk shows (attract screen name, picture, mode). */
  onSettingsSaved: () => void | Promise<void>;
  clock?: RendererClock;
  /** The video-network check's engine and (never shown) view; absent: the check says it cannot run here. */
  network?: { engineFor: NetworkCheckDeps['engineFor']; view?: NetworkCheckDeps['view'] };
}

export class StaffPanel {
  readonly #deps: StaffPanelDeps;
  readonly #clock: RendererClock;
  readonly #calls: StaffCalls;
  readonly #pin: PinEntry;
  readonly #status: KioskStatus;
  readonly #settings: SettingsForm;
  readonly #voices: Voices;
  readonly #doctor: Doctor;
  /** Diagnostics: "Check the video network" (a test session's channel, joined receive-only). */
  readonly networkCheck: NetworkCheckRun;
  /** Diagnostics: "Record the service's wire report" (the service check, recorded; nothing billed). */
  readonly wireReport: WireReportRun;
  readonly #ledger: Ledger;
  /** Visitors: the kiosk's visitor report and the language it is read in. */
  readonly visitors: Visitors;
  readonly #logs: LogTail;
  readonly #system: SystemActions;
  /** Each tab's (re)load; the error when it could not. */
  readonly #load: Record<StaffTab, () => Promise<ErrorInfo | null>>;
  #view = $state<StaffView>('closed');
  #tab = $state<StaffTab>('status');
  #tabError = $state<string | null>(null);
  #pressTimer: unknown = null;
  #idleTimer: unknown = null;

  constructor(deps: StaffPanelDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? browserClock;
    this.#calls = new StaffCalls({ staff: deps.staff, clock: this.#clock, onUnauthorized: () => this.#onUnauthorized() });
    this.#pin = new PinEntry({
      calls: this.#calls,
      clock: this.#clock,
      isOpen: () => this.isOpen,
      isShowing: () => this.#view === 'pin',
      onUnlocked: () => this.#enterPanel(),
    });
    this.#status = new KioskStatus(this.#calls);
    this.#settings = new SettingsForm({ calls: this.#calls, onSettingsSaved: () => this.#deps.onSettingsSaved(), canRestart: () => this.#status.status?.canRestart ?? true });
    this.#voices = new Voices(this.#calls, this.#settings);
    this.#doctor = new Doctor(this.#calls);
    this.networkCheck = new NetworkCheckRun({ calls: this.#calls, engineFor: deps.network?.engineFor ?? null, view: deps.network?.view ?? detachedView });
    this.wireReport = new WireReportRun(this.#calls);
    this.#ledger = new Ledger(this.#calls);
    this.visitors = new Visitors(this.#calls, (s) => s.visitors());
    this.#logs = new LogTail(this.#calls);
    this.#system = new SystemActions(this.#calls, this.#status);
    this.#load = {
      status: () => this.#status.load(),
      settings: () => this.#settings.load(),
      voices: () => this.#voices.load(),
      diagnostics: () => this.#doctor.run(),
      ledger: () => this.#ledger.load(),
      visitors: () => this.visitors.load(),
      logs: () => this.#logs.load(),
      system: () => this.#status.load(),
    };
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
    return this.#pin.step;
  }
  /** How many digits are typed (the pad shows dots, never the digits). */
  get pinLength(): number {
    return this.#pin.length;
  }
  get pinMinLength(): number {
    return this.#pin.minLength;
  }
  get pinMessage(): string | null {
    return this.#pin.message;
  }
  /** Whole seconds the pad stays locked (null when not locked). */
  get lockedForS(): number | null {
    return this.#pin.lockedForS;
  }
  /** Settings main did not use, one line each (shown on the PIN pad). */
  get settingsNotUsed(): string[] {
    return this.#pin.settingsNotUsed;
  }
  get attemptsLeft(): number | null {
    return this.#pin.attemptsLeft;
  }
  get busy(): boolean {
    return this.#calls.busy;
  }
  get tab(): StaffTab {
    return this.#tab;
  }
  /** A one-line message about the last action (saved, exported…). */
  get notice(): string | null {
    return this.#calls.notice;
  }
  get status(): StaffStatus | null {
    return this.#status.status;
  }
  get staffSettings(): StaffSettings | null {
    return this.#settings.staffSettings;
  }
  /** The settings form (null until the settings are loaded). */
  get draft(): SettingsDraft | null {
    return this.#settings.draft;
  }
  set draft(draft: SettingsDraft | null) {
    this.#settings.draft = draft;
  }
  get fieldErrors(): Record<string, string> {
    return this.#settings.fieldErrors;
  }
  get saveMessage(): string | null {
    return this.#settings.saveMessage;
  }
  /** The API key as typed (write-only: never filled from main). */
  get apiKeyDraft(): string {
    return this.#settings.apiKeyDraft;
  }
  set apiKeyDraft(key: string) {
    this.#settings.apiKeyDraft = key;
  }
  /** What the form's data: URI picture is: the picked file's name and size, or the stored picture. */
  get pickedPicture(): string | null {
    return this.#settings.pickedPicture;
  }
  get voices(): VoiceList | null {
    return this.#voices.voices;
  }
  /** The clone form, as typed. */
  get clone(): { audioUrl: string; voice: string; language: string } {
    return this.#voices.clone;
  }
  set clone(clone: { audioUrl: string; voice: string; language: string }) {
    this.#voices.clone = clone;
  }
  get cloneMessage(): string | null {
    return this.#voices.cloneMessage;
  }
  get doctor(): DoctorReport | null {
    return this.#doctor.report;
  }
  get ledger(): LedgerTotals | null {
    return this.#ledger.totals;
  }
  get logs(): string[] | null {
    return this.#logs.lines;
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
    this.#pin.reset(null);
    this.#armInactivity();
    await this.#pin.load();
  }

  /** Close (main forgets the unlock). */
  async close(): Promise<void> {
    if (!this.isOpen) return;
    this.#view = 'closed';
    this.#clearTimers();
    this.#pin.reset(null);
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
    if (this.#view === 'panel' && this.#clock.now() - this.#calls.lastCallMs >= KEEP_ALIVE_MS) void this.#calls.call((s) => s.status(), { quiet: true });
  }

  // -------------------------------------------------------------------------------------------------
  // PIN pad (pin.svelte.ts)

  pressDigit(digit: string): void {
    this.#pin.pressDigit(digit);
  }

  backspace(): void {
    this.#pin.backspace();
  }

  clearPin(): void {
    this.#pin.clear();
  }

  async submitPin(): Promise<void> {
    await this.#pin.submit();
  }

  // -------------------------------------------------------------------------------------------------
  // Tabs

  async setTab(tab: StaffTab): Promise<void> {
    this.#tab = tab;
    this.#tabError = null;
    this.#calls.notice = null;
    await this.refresh();
  }

  /** (Re)load the current tab's data. */
  async refresh(): Promise<void> {
    if (this.#view !== 'panel') return;
    const tab = this.#tab;
    const error = await this.#load[tab]();
    if (error && this.#tab === tab) this.#tabError = error.message;
  }

  /** Save the settings form; per-field messages come back from main's schema. */
  saveSettings(): Promise<boolean> {
    return this.#settings.save();
  }

  /** Write-only API key: set the typed key, or clear the stored one (null). */
  setApiKey(clear = false): Promise<void> {
    return this.#settings.setApiKey(clear);
  }

  /** A picked picture file → data: URI in the form (type and size checked first). */
  pickPicture(file: { name: string; type: string; size: number; arrayBuffer(): Promise<ArrayBuffer> }): Promise<void> {
    return this.#settings.pickPicture(file);
  }

  /** Make `voice` the avatar's voice (saved at once). */
  pickVoice(voice: string): Promise<void> {
    return this.#voices.pickVoice(voice);
  }

  cloneVoice(): Promise<void> {
    return this.#voices.cloneVoice();
  }

  /** The ledger as CSV (the component turns it into a download). */
  exportCsv(since?: string): Promise<{ fileName: string; csv: string } | null> {
    return this.#ledger.exportCsv(since);
  }

  setOpenAtLogin(enabled: boolean): Promise<void> {
    return this.#system.setOpenAtLogin(enabled);
  }

  /** The avatar's volume, 0–100 % (the Status tab's slider). */
  setAvatarVolume(percent: number): Promise<void> {
    return this.#system.setAvatarVolume(percent);
  }

  exitKiosk(): Promise<void> {
    return this.#system.exitKiosk();
  }

  restart(): Promise<void> {
    return this.#system.restart();
  }

  /** Release every timer (the app is going away). */
  dispose(): void {
    this.#clearTimers();
    this.cornerUp();
  }

  // -------------------------------------------------------------------------------------------------

  /** A staff call answered `unauthorized`: with the tabs showing, main forgot the unlock (60 s without a staff call). */
  #onUnauthorized(): void {
    if (this.#view !== 'panel') return;
    this.#view = 'pin';
    this.#pin.relock('The panel locked itself. Enter the PIN again.');
    this.#clearTabData();
  }

  #enterPanel(): void {
    this.#view = 'panel';
    this.#pin.reset(null);
    this.#armInactivity();
    void this.setTab('status');
  }

  #armInactivity(): void {
    if (this.#idleTimer !== null) this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = this.#clock.setTimeout(() => {
      this.#idleTimer = null;
      void this.close();
    }, INACTIVITY_CLOSE_MS);
  }

  #clearTimers(): void {
    if (this.#idleTimer !== null) this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = null;
    this.#pin.stop();
  }

  #clearTabData(): void {
    this.#status.clear();
    this.#settings.clear();
    this.#voices.clear();
    this.#doctor.clear();
    this.#ledger.clear();
    this.visitors.clear();
    this.#logs.clear();
    this.#tabError = null;
    this.#calls.notice = null;
    this.#tab = 'status';
  }
}

/** A view nobody sees, for a receive-only join that renders nothing. */
function detachedView(): LiveView {
  return {
    avatarHost: document.createElement('div'),
    selfHost: document.createElement('div'),
    showAvatarStream: () => {},
    showSelfStream: () => {},
    clear: () => {},
  };
}
