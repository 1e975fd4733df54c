/**
 * Which engine runs a call: the demo engine for the emulator's credentials, else the configured one
 * (`auto` = agora-web, the Web SDK, which runs in the sandboxed renderer; `agora-native` is opt-in).
 * The SDKs are loaded lazily inside the factories, so the demo path never imports them.
 */
import { isEmulatorCredentials } from '../../../electron/core/rtc-ids.ts';
import type { PublicConfig, RtcCredentials } from '../../../electron/contract.ts';
import { AgoraNativeEngine } from './agora-native-engine.ts';
import { AgoraWebEngine, loadAgoraWebSdk } from './agora-web-engine.ts';
import { DemoEngine, preloadDemoImage } from './demo-engine.ts';
import type { EngineKind, EngineEvent, RemoteMediaProgress, RtcEngine } from './engine.ts';

export function chooseEngine(creds: Pick<RtcCredentials, 'app_id'>, config: Pick<PublicConfig, 'rtcEngine'>): EngineKind {
  if (isEmulatorCredentials(creds)) return 'demo';
  return config.rtcEngine === 'agora-native' ? 'agora-native' : 'agora-web';
}

export interface EngineContext {
  config: PublicConfig;
  getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
}

/** Build the engine; agora-web's SDK import happens on join, so this stays synchronous. */
export function createEngine(kind: EngineKind, ctx: EngineContext): RtcEngine {
  switch (kind) {
    case 'demo':
      return new DemoEngine({ getUserMedia: ctx.getUserMedia, imageUrl: ctx.config.avatar.imageDataUrl, name: ctx.config.avatar.name });
    case 'agora-native':
      return new AgoraNativeEngine();
    case 'agora-web':
      return new LazyEngine('agora-web', async () => new AgoraWebEngine(await loadAgoraWebSdk(), { cloudProxy: ctx.config.rtc?.cloudProxy ?? 'off' }));
  }
}

/**
 * Load what the next call's engine needs while the attract screen shows, so the tap does not pay for it:
 * the Agora Web SDK chunk (about 1.5 MB to parse) for the real service, the decoded picture in demo mode.
 * Errors are ignored here; the join reports them.
 */
export function warmEngine(config: PublicConfig): void {
  if (config.mode === 'demo') preloadDemoImage(config.avatar.imageDataUrl);
  else if (config.rtcEngine !== 'agora-native') void loadAgoraWebSdk().catch(() => undefined);
}

/** Defers the construction of an engine whose SDK is a dynamic import until `join`. */
class LazyEngine implements RtcEngine {
  readonly kind: EngineKind;
  readonly #make: () => Promise<RtcEngine>;
  readonly #listeners = new Set<(event: EngineEvent) => void>();
  #inner: RtcEngine | null = null;
  #left = false;
  #muted = false;

  constructor(kind: EngineKind, make: () => Promise<RtcEngine>) {
    this.kind = kind;
    this.#make = make;
  }

  #making: Promise<RtcEngine> | null = null;

  /** The inner engine, made once (a pre-join and the join after the tap share it). */
  async #ensure(): Promise<RtcEngine | null> {
    this.#making ??= this.#make().then((inner) => {
      this.#inner = inner;
      for (const l of this.#listeners) inner.onEvent(l);
      return inner;
    });
    const inner = await this.#making;
    return this.#left ? null : inner;
  }

  async prejoin(...args: Parameters<RtcEngine['join']>): Promise<void> {
    const inner = await this.#ensure();
    if (!inner?.prejoin) return;
    await inner.prejoin(...args);
  }

  async join(...args: Parameters<RtcEngine['join']>): Promise<void> {
    const inner = await this.#ensure();
    if (!inner) return;
    if (this.#muted) await inner.setMuted(true);
    await inner.join(...args);
  }
  async setMuted(muted: boolean): Promise<void> {
    this.#muted = muted;
    await this.#inner?.setMuted(muted);
  }
  resumePlayback(): void {
    this.#inner?.resumePlayback();
  }
  // The media watchdog.
  remoteMediaProgress(): RemoteMediaProgress | null {
    return this.#inner?.remoteMediaProgress() ?? null;
  }
  async resubscribeRemote(): Promise<void> {
    await this.#inner?.resubscribeRemote();
  }
  // The visitor's own tracks, for the idle hang-up (voice activity, presence).
  localAudioTrack(): MediaStreamTrack | null {
    return this.#inner?.localAudioTrack?.() ?? null;
  }

  localVideoTrack(): MediaStreamTrack | null {
    return this.#inner?.localVideoTrack?.() ?? null;
  }
  onEvent(listener: (event: EngineEvent) => void): () => void {
    this.#listeners.add(listener);
    const off = this.#inner?.onEvent(listener);
    return () => {
      this.#listeners.delete(listener);
      off?.();
    };
  }
  async leave(): Promise<void> {
    this.#left = true;
    await this.#inner?.leave();
  }
}
