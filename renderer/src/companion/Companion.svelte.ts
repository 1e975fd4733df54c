/**
 * The desktop companion's renderer side: main's `command` events (tray menu, global
 * shortcut) and push-to-talk.
 *
 * Commands: `toggle-call` starts a call from the attract screen (with the tray item's avatar when it
 * names one), cancels one that is connecting, hangs up a live one, and from an end screen starts a new
 * one; `hangup` cancels or hangs up whatever is running; `open-settings` goes to the listeners
 * registered with `onOpenSettings` (the staff panel, when it lands), else it is only logged.
 *
 * Push-to-talk (`companion.pushToTalk`): during a call the microphone stays muted unless Space or the
 * on-screen button is held. It drives the one mute path there is (KioskApp.toggleMute → LiveCall and
 * main's shared mute state), and puts the mute back whenever main resets it (main unmutes at every
 * session start).
 */
import type { CommandEvent, KioskEvent, PublicConfig, SessionState } from '../../../electron/contract.ts';
import type { Cast } from '../attract/Cast.svelte.ts';

/** What the companion needs of the app (KioskApp implements it). */
export interface CompanionHost {
  readonly screen: 'boot' | 'attract' | 'connecting' | 'live' | 'ended' | 'error';
  readonly config: PublicConfig | null;
  readonly muted: boolean;
  /** A tap is being answered (the screen may still show attract for a moment). */
  readonly isStarting: boolean;
  readonly session: SessionState;
  readonly cast: Cast;
  startCall(): Promise<void>;
  cancel(): Promise<void>;
  hangUp(): Promise<void>;
  dismiss(): void;
  toggleMute(): Promise<void>;
}

export type TalkSource = 'key' | 'button';

export class Companion {
  readonly #app: CompanionHost;
  readonly #settingsListeners = new Set<() => void>();
  #keyHeld = $state(false);
  #buttonHeld = $state(false);
  /** A toggle-call on an end screen while main still wraps the last call up: start once it has. */
  #pendingStart: { avatarId?: string } | null = null;

  constructor(app: CompanionHost) {
    this.#app = app;
  }

  /** Push-to-talk is configured (`companion.pushToTalk`). */
  get isPushToTalk(): boolean {
    return this.#app.config?.companion?.pushToTalk === true;
  }
  /** Space or the button is held: the microphone is open. */
  get isTalking(): boolean {
    return this.#keyHeld || this.#buttonHeld;
  }

  /** Register the settings opener (the staff panel); returns the unregister function. */
  onOpenSettings(listener: () => void): () => void {
    this.#settingsListeners.add(listener);
    return () => this.#settingsListeners.delete(listener);
  }

  /** Every main → renderer event, after KioskApp has applied it. */
  observe(event: KioskEvent): void {
    if (event.type === 'command') this.#onCommand(event);
    else if (event.type === 'muted') this.#syncMute();
    // Every step of a starting or live call (the screen may still show attract for a moment after the tap).
    else if (event.type === 'state' && IN_CALL.has(event.state.phase)) this.#syncMute();
    else if (event.type === 'state' && this.#pendingStart && isFinished(event.state.phase)) {
      const pending = this.#pendingStart;
      this.#pendingStart = null;
      if (this.#app.screen === 'attract') this.#start(pending.avatarId);
    }
  }

  press(source: TalkSource): void {
    if (!this.isPushToTalk) return;
    if (source === 'key') this.#keyHeld = true;
    else this.#buttonHeld = true;
    this.#syncMute();
  }

  release(source: TalkSource | 'all'): void {
    if (source === 'key' || source === 'all') this.#keyHeld = false;
    if (source === 'button' || source === 'all') this.#buttonHeld = false;
    this.#syncMute();
  }

  #onCommand(event: CommandEvent): void {
    const app = this.#app;
    const screen = app.screen;
    this.#pendingStart = null; // the latest command wins
    switch (event.command) {
      case 'toggle-call':
        if (screen === 'attract') this.#start(event.avatarId);
        else if (screen === 'connecting') void app.cancel();
        else if (screen === 'live') void app.hangUp();
        else if (screen === 'ended' || screen === 'error') {
          app.dismiss();
          // Main takes a new call only once the last one has finished (it is `ending` for a moment).
          if (isFinished(app.session.phase)) this.#start(event.avatarId);
          else this.#pendingStart = event.avatarId ? { avatarId: event.avatarId } : {};
        }
        break;
      case 'hangup':
        if (screen === 'connecting') void app.cancel();
        else if (screen === 'live') void app.hangUp();
        break;
      case 'open-settings':
        if (this.#settingsListeners.size === 0) console.info('command: open-settings (no settings panel in this build)');
        for (const l of [...this.#settingsListeners]) l();
        break;
    }
  }

  #start(avatarId: string | undefined): void {
    if (avatarId && !this.#app.cast.selectById(avatarId)) console.warn('command: unknown avatar', avatarId);
    void this.#app.startCall();
  }

  /** With push-to-talk, during a call: muted exactly when nothing is held. */
  #syncMute(): void {
    if (!this.isPushToTalk) return;
    const screen = this.#app.screen;
    if (screen !== 'connecting' && screen !== 'live' && !this.#app.isStarting) return;
    const shouldMute = !this.isTalking;
    // toggleMute flips `muted` at once (optimistic), so a burst of calls never toggles twice.
    if (this.#app.muted !== shouldMute) void this.#app.toggleMute();
  }
}

const IN_CALL: ReadonlySet<SessionState['phase']> = new Set(['creating', 'connecting', 'warming', 'live', 'reconnecting']);

function isFinished(phase: SessionState['phase']): boolean {
  return phase === 'idle' || phase === 'ended' || phase === 'failed';
}
