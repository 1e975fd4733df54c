/**
 * The demo engine, for the emulator's credentials (`isEmulatorCredentials`): no RTC network at all, but
 * the same live-view path as a real call. The avatar image is drawn on a canvas of the service's output
 * height and frame rate (`OUTPUT_VIDEO_HEIGHT_PX`, `OUTPUT_VIDEO_FPS`, spec §1) with idle motion, and its
 * mouth/scale follow the visitor's real microphone (WebAudio AnalyserNode on the getUserMedia track), so a
 * kiosk in demo mode still "listens". The canvas goes to the live <video> through
 * `canvas.captureStream(DEMO_FPS)`.
 *
 * It asks for the microphone (and the camera in video mode) exactly like a real call would, so a denied
 * or missing device fails the same way. The avatar's voice has its own <audio> element in the avatar host,
 * played at the kiosk's avatar volume as a real engine plays the remote voice; the emulator sends no
 * speech, so it carries silence.
 */
import type { CallMode, RtcCredentials } from '../../../electron/contract.ts';
import { OUTPUT_VIDEO_FPS, OUTPUT_VIDEO_HEIGHT_PX } from '../../../electron/core/protocol-constants.ts';
import { demoFreezeAfterMs, demoJoinDelayMs, demoQuality, type DemoQuality } from '../../../electron/core/rtc-ids.ts';
import type { QualitySample } from './quality.ts';
import { AvatarAnimator, prepareAvatarLayers, type AvatarImage } from './avatar-animator.ts';
import { DeviceRecovery } from './device-recovery.ts';
import { cancelledError, classifyDeviceError, Emitter, RtcError, type EngineEvent, type EngineState, type LiveView, type RemoteMediaProgress, type RtcEngine, type VisitorNotice } from './engine.ts';

/** The service's picture: its height in 16:9 (the spec names only the height: 960 × 540). */
export const DEMO_WIDTH = (OUTPUT_VIDEO_HEIGHT_PX * 16) / 9;
export const DEMO_HEIGHT = OUTPUT_VIDEO_HEIGHT_PX;
export const DEMO_FPS = OUTPUT_VIDEO_FPS;
/** What the demo engine asks for (exported so the tap can open the devices ahead: rtc/media-prefetch.ts). */
export const DEMO_MIC_CONSTRAINTS: MediaStreamConstraints = { audio: { echoCancellation: true, noiseSuppression: true }, video: false };
export const DEMO_CAMERA_CONSTRAINTS: MediaStreamConstraints = { audio: false, video: { width: { ideal: 640 }, height: { ideal: 480 }, facingMode: 'user' } };

/** The modelled stream's bytes per frame (about 1 Mbps at `DEMO_FPS`), for the watchdog's received bytes. */
const DEMO_BYTES_PER_FRAME = 5_000;

/** How often the demo engine reports connection figures (the Web SDK's network-quality period). */
export const DEMO_QUALITY_PERIOD_MS = 2_000;

/**
 * Plausible figures for the modelled call: the service's video at about 1 Mbps (audio only: Opus at about
 * 48 kbps), a little loss and a short round trip; `poor` is what a congested venue network looks like.
 * A gentle wobble by sample number keeps them from looking frozen, without randomness.
 */
export function demoQualitySample(quality: DemoQuality, mode: CallMode, n: number): QualitySample {
  const wobble = Math.sin(n * 1.7);
  if (quality === 'poor') {
    return {
      bitrateKbps: Math.round((mode === 'video' ? 280 : 22) + wobble * (mode === 'video' ? 40 : 3)),
      packetLossPct: Math.round((14 + wobble * 3) * 10) / 10,
      frameRate: mode === 'video' ? Math.round(8 + wobble * 2) : 0,
      rttMs: Math.round(620 + wobble * 80),
      level: 'poor',
    };
  }
  return {
    bitrateKbps: Math.round((mode === 'video' ? 980 : 48) + wobble * (mode === 'video' ? 60 : 2)),
    packetLossPct: Math.round((0.3 + wobble * 0.2) * 10) / 10,
    frameRate: mode === 'video' ? DEMO_FPS : 0,
    rttMs: Math.round(45 + wobble * 8),
    level: 'good',
  };
}

/** What the demo avatar is drawn with: its animator (on a DEMO_WIDTH × DEMO_HEIGHT canvas) and the canvas's stream. */
interface DemoPicture {
  animator: AvatarAnimator;
  output: MediaStream;
  /** Test-only: the avatar's media stops after this long (the emulator's `demoFreezeAfterMs` knob). */
  freezeAfterMs: number | null;
}

export interface DemoEngineDeps {
  getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  /** Devices plugged in or out (default: `navigator.mediaDevices`' devicechange); returns the unsubscribe. */
  onDeviceChange?: (listener: () => void) => () => void;
  /** Device recovery timing (device-recovery.ts defaults); tests shorten it. */
  deviceGraceMs?: number;
  deviceRetryMs?: number;
  /** The avatar picture (config.avatar.imageDataUrl) or null for the built-in silhouette. */
  imageUrl: string | null;
  name: string;
}

export class DemoEngine implements RtcEngine {
  readonly kind = 'demo' as const;
  readonly #deps: DemoEngineDeps;
  readonly #events = new Emitter<EngineEvent>();
  #state: EngineState = 'idle';
  #closed = false;
  #mic: MediaStream | null = null;
  #camera: MediaStream | null = null;
  #audio: AudioContext | null = null;
  #analyser: AnalyserNode | null = null;
  #samples: Uint8Array<ArrayBuffer> | null = null;
  #timer: ReturnType<typeof setInterval> | null = null;
  #output: MediaStream | null = null;
  #view: LiveView | null = null;
  #muted = false;
  #level = 0;
  /** `join` ran: the shared live view is this engine's to clear (a pre-joined spare never touches it). */
  #inCall = false;
  /** The modelled channel join (receive-only until `join` publishes), by channel. */
  #channel: { id: string; joined: Promise<void>; release: () => void } | null = null;
  #joinTimer: ReturnType<typeof setTimeout> | null = null;
  /** Frames drawn of the avatar (its picture and, modelled, its voice): the media watchdog's progress. */
  #framesDrawn = 0;
  /** How long the modelled channel join takes (ms). */
  #joinMs: number | null = null;
  /** When the test knob froze the avatar's media (performance.now()), or null. */
  #frozenSinceMs: number | null = null;
  #qualityTimer: ReturnType<typeof setInterval> | null = null;
  /** Devices that come and go during the call (device-recovery.ts), as the Web SDK engine does. */
  #recovery: { microphone: DeviceRecovery; camera: DeviceRecovery } | null = null;
  #unwatchDevices: (() => void) | null = null;
  #source: MediaStreamAudioSourceNode | null = null;
  /** The avatar's picture, made at the pre-join or at the tap (`#preparePicture`). */
  #picture: Promise<DemoPicture> | null = null;
  /** Aborted at `leave`: removes this engine's `ended` listeners from the visitor's tracks. A stopped track
   *  can outlive the call (whoever else holds it), and its listener would keep this engine alive with it. */
  readonly #trackListeners = new AbortController();
  /** The avatar volume, 0..1 (`setAvatarVolume`). */
  #volume = 1;
  /** The avatar's voice channel (`data-avatar-voice`), from the first frame on. */
  #voice: HTMLAudioElement | null = null;

  constructor(deps: DemoEngineDeps) {
    this.#deps = deps;
  }

  onEvent(listener: (event: EngineEvent) => void): () => void {
    return this.#events.on(listener);
  }

  /**
   * The modelled channel join: no network, but it takes as long as the emulator's token says (a real
   * join commonly takes several hundred ms), so what pre-joining saves shows in the figures. Receive-only:
   * no device is opened here. The avatar's picture (canvas, first frame, stream) is made ready too, so the
   * tap only opens the devices.
   */
  async prejoin(creds: RtcCredentials, _mode: CallMode, view: LiveView): Promise<void> {
    if (this.#closed) throw cancelledError();
    this.#view = view;
    const picture = this.#preparePicture(creds);
    await this.#joinChannel(creds);
    await picture;
    if (this.#closed) throw cancelledError();
  }

  #joinChannel(creds: RtcCredentials): Promise<void> {
    if (this.#channel?.id !== creds.channel_id) {
      const delayMs = demoJoinDelayMs(creds.token);
      this.#joinMs = Math.max(0, delayMs); // the modelled join's own time (the field figure `joined`)
      let release = (): void => {};
      const joined = new Promise<void>((resolve) => {
        release = resolve;
        if (delayMs <= 0) resolve();
        else this.#joinTimer = setTimeout(resolve, delayMs);
      });
      this.#channel = { id: creds.channel_id, joined, release };
    }
    return this.#channel.joined;
  }

  /**
   * The avatar's picture: the canvas with its first frame drawn, and the stream the live <video>
   * shows. No device and no timer: frames are drawn only once the call has started.
   */
  #preparePicture(creds: RtcCredentials): Promise<DemoPicture> {
    this.#picture ??= loadImage(this.#deps.imageUrl).then((image) => {
      const canvas = document.createElement('canvas');
      canvas.width = DEMO_WIDTH;
      canvas.height = DEMO_HEIGHT;
      const ctx = canvas.getContext('2d', { alpha: false });
      if (!ctx) throw new RtcError('other', 'The demo picture could not be drawn.');
      const animator = new AvatarAnimator(ctx, DEMO_WIDTH, DEMO_HEIGHT, image, this.#deps.name);
      // The stream first: a canvas stream carries the frames drawn after it was made.
      const output = canvas.captureStream(DEMO_FPS);
      animator.draw(0, 0);
      return { animator, output, freezeAfterMs: demoFreezeAfterMs(creds.token) };
    });
    return this.#picture;
  }

  async join(creds: RtcCredentials, mode: CallMode, view: LiveView): Promise<void> {
    if (this.#closed) throw cancelledError();
    this.#view = view;
    this.#inCall = true;
    this.#setState('joining');
    // Microphone, camera, the channel and the picture at once (fast start): each can take a few hundred ms.
    const picture = this.#preparePicture(creds);
    picture.catch(() => undefined); // awaited below, after the devices
    const channel = this.#joinChannel(creds);
    const micAsked = this.#deps.getUserMedia(DEMO_MIC_CONSTRAINTS);
    const cameraAsked = mode === 'video' ? this.#deps.getUserMedia(DEMO_CAMERA_CONSTRAINTS) : null;
    // A camera that fails before our side is ready fails the call before anything is billed; one that is
    // merely slow (real cameras take up to a second to open) does not hold the call back.
    let cameraFailed: unknown = null;
    const camera = cameraAsked?.then(
      (stream) => {
        if (this.#closed) for (const t of stream.getTracks()) t.stop();
        else this.#camera = stream;
        return stream;
      },
      (err: unknown) => {
        cameraFailed = err;
        return null;
      },
    );
    let micStream: MediaStream;
    try {
      micStream = await micAsked;
    } catch (err) {
      await camera;
      this.#stopLocal();
      throw classifyDeviceError(err, 'microphone');
    }
    if (this.#closed) {
      for (const t of micStream.getTracks()) t.stop();
      throw this.#abort();
    }
    this.#mic = micStream;
    this.#watchDevices(view);
    // Muted before the join (push-to-talk starts muted): the new track starts disabled too.
    for (const t of micStream.getAudioTracks()) t.enabled = !this.#muted;
    await channel;
    if (this.#closed) throw this.#abort();
    if (cameraFailed !== null) {
      this.#stopLocal();
      throw classifyDeviceError(cameraFailed, 'camera');
    }
    // The same field milestones as the Web SDK's events: the join's own time, then (modelled) the avatar
    // publishing and its first frame, once its picture is shown.
    if (this.#joinMs !== null) this.#events.emit({ type: 'milestone', milestone: 'joined', durationMs: this.#joinMs });
    // Microphone ready and the channel joined: our side is ready for conn_init. Everything below overlaps
    // the service's answer.
    this.#events.emit({ type: 'ready' });

    let p: DemoPicture;
    try {
      p = await picture;
    } catch (err) {
      this.#stopLocal();
      throw err instanceof RtcError ? err : new RtcError('other', 'The demo picture could not be drawn.', { cause: err });
    }
    if (this.#closed) throw this.#abort();
    this.#output = p.output;
    view.showAvatarStream(p.output);
    const startMs = performance.now();
    // Test-only (the emulator's `demoFreezeAfterMs` knob): the avatar's media stops, as when the media path
    // dies while the control socket stays up.
    const draw = (): void => {
      const tMs = performance.now() - startMs;
      if (p.freezeAfterMs !== null && tMs >= p.freezeAfterMs && this.#framesDrawn > 0) {
        this.#frozenSinceMs ??= performance.now();
        return;
      }
      this.#level = this.#muted ? this.#level * 0.6 : this.#readLevel();
      p.animator.draw(tMs, this.#level);
      this.#framesDrawn++;
    };
    this.#events.emit({ type: 'milestone', milestone: 'avatar_published' });
    draw();
    this.#events.emit({ type: 'milestone', milestone: mode === 'video' ? 'first_frame' : 'first_audio' });
    // setInterval, not requestAnimationFrame: the stream must keep its frame rate even when the page is hidden.
    this.#timer = setInterval(draw, 1000 / DEMO_FPS);
    this.#setState('playing');
    this.#startQuality(demoQuality(creds.token), mode);

    // Microphone level → mouth, after the first frame is on its way (making an AudioContext takes a while).
    // The analyser is never connected to the speakers.
    this.#audio = new AudioContext();
    this.#analyser = this.#audio.createAnalyser();
    this.#analyser.fftSize = 512;
    this.#analyser.smoothingTimeConstant = 0.5;
    this.#listenTo(this.#mic ?? micStream);
    this.#samples = new Uint8Array(new ArrayBuffer(this.#analyser.fftSize));
    void this.#audio.resume().catch(() => undefined);
    this.#playVoice(view, this.#audio);

    const cameraStream = await camera;
    if (this.#closed) throw this.#abort();
    if (cameraFailed !== null) {
      this.#stopLocal();
      throw classifyDeviceError(cameraFailed, 'camera');
    }
    if (cameraStream) {
      view.showSelfStream(cameraStream);
      for (const t of cameraStream.getVideoTracks()) this.#onEnded(t, () => this.#recovery?.camera.lost());
    }
  }

  /** A device's track ended (unplugged, or taken by the system): until `leave`, which removes the listener. */
  #onEnded(track: MediaStreamTrack, listener: () => void): void {
    track.addEventListener('ended', listener, { signal: this.#trackListeners.signal });
  }

  /** The avatar's voice channel, played like a real engine's remote voice, at the avatar volume. */
  #playVoice(view: LiveView, audio: AudioContext): void {
    const voice = document.createElement('audio');
    voice.dataset.avatarVoice = '';
    voice.srcObject = audio.createMediaStreamDestination().stream;
    voice.volume = this.#volume;
    view.avatarHost.append(voice); // removed with the view's other inserted elements (`LiveView.clear`)
    this.#voice = voice;
    void voice.play().catch(() => undefined); // silence: a blocked autoplay loses nothing
  }

  setAvatarVolume(percent: number): void {
    this.#volume = Math.min(100, Math.max(0, percent)) / 100;
    if (this.#voice) this.#voice.volume = this.#volume;
  }

  /** The mouth follows this microphone (after a switch, the new one). Never connected to the speakers. */
  #listenTo(stream: MediaStream): void {
    if (!this.#audio || !this.#analyser) return;
    this.#source?.disconnect();
    this.#source = this.#audio.createMediaStreamSource(stream);
    this.#source.connect(this.#analyser);
  }

  /**
   * As the Web SDK engine: a device whose track ends is re-acquired (the replugged one or another, by
   * asking for the same constraints again), the visitor is told, and no microphone within the grace time
   * ends the call (`device_missing`); no camera only leaves the notice.
   */
  #watchDevices(view: LiveView): void {
    const warn = (notice: VisitorNotice, message: string): void => this.#events.emit({ type: 'warning', message, notice });
    const timing = { ...(this.#deps.deviceGraceMs !== undefined ? { graceMs: this.#deps.deviceGraceMs } : {}), ...(this.#deps.deviceRetryMs !== undefined ? { retryMs: this.#deps.deviceRetryMs } : {}) };
    const recovery = {
      microphone: new DeviceRecovery({
        device: 'microphone',
        ...timing,
        reacquire: async () => {
          const stream = await this.#deps.getUserMedia(DEMO_MIC_CONSTRAINTS);
          if (this.#closed) {
            for (const t of stream.getTracks()) t.stop();
            return false;
          }
          for (const t of this.#mic?.getTracks() ?? []) t.stop();
          this.#mic = stream;
          for (const t of stream.getAudioTracks()) {
            t.enabled = !this.#muted;
            this.#onEnded(t, () => this.#recovery?.microphone.lost());
          }
          this.#listenTo(stream);
          return true;
        },
        notice: warn,
        giveUp: () => this.#events.emit({ type: 'error', error: new RtcError('device_missing', 'The microphone was disconnected and no other one was found; the call was ended.') }),
      }),
      camera: new DeviceRecovery({
        device: 'camera',
        ...timing,
        reacquire: async () => {
          const stream = await this.#deps.getUserMedia(DEMO_CAMERA_CONSTRAINTS);
          if (this.#closed) {
            for (const t of stream.getTracks()) t.stop();
            return false;
          }
          for (const t of this.#camera?.getTracks() ?? []) t.stop();
          this.#camera = stream;
          for (const t of stream.getVideoTracks()) this.#onEnded(t, () => this.#recovery?.camera.lost());
          view.showSelfStream(stream);
          return true;
        },
        notice: warn,
        giveUp: () => {},
      }),
    };
    this.#recovery = recovery;
    for (const t of this.#mic?.getAudioTracks() ?? []) this.#onEnded(t, () => recovery.microphone.lost());
    const subscribe = this.#deps.onDeviceChange ?? defaultDeviceChange;
    this.#unwatchDevices = subscribe(() => {
      recovery.microphone.devicesChanged();
      recovery.camera.devicesChanged();
    });
  }

  #startQuality(quality: DemoQuality, mode: CallMode): void {
    let n = 0;
    const report = (): void => this.#events.emit({ type: 'quality', sample: demoQualitySample(quality, mode, n++) });
    report();
    this.#qualityTimer = setInterval(report, DEMO_QUALITY_PERIOD_MS);
  }

  remoteMediaProgress(): RemoteMediaProgress | null {
    if (this.#framesDrawn === 0) return null;
    // One loop draws the picture and moves the mouth: in a voice-only call it stands for the avatar's voice.
    // The same signals as the Web SDK's stats: frames decoded/rendered and freeze time, and the modelled
    // connection (connected; bytes arriving with the media). A frozen demo avatar (test knob) stops all.
    const frozenMs = this.#frozenSinceMs === null ? 0 : performance.now() - this.#frozenSinceMs;
    const fps = this.#frozenSinceMs === null ? DEMO_FPS : 0;
    return {
      video: this.#framesDrawn,
      audio: this.#framesDrawn,
      videoFrames: { decodeFps: fps, renderFps: fps, freezeMs: frozenMs },
      audioFreezeMs: 0,
      connection: { connected: !this.#closed, bytesReceived: this.#framesDrawn * DEMO_BYTES_PER_FRAME },
    };
  }

  /** Nothing to subscribe to (no network): a frozen demo avatar stays frozen, so the watchdog goes on to
   *  its hang-up (the page's `__mediaWatch` figures show it asked once). */
  async resubscribeRemote(): Promise<void> {}

  async setMuted(muted: boolean): Promise<void> {
    this.#muted = muted;
    for (const t of this.#mic?.getAudioTracks() ?? []) t.enabled = !muted;
  }

  // The visitor's own tracks, for the idle hang-up (voice activity, presence).
  localAudioTrack(): MediaStreamTrack | null {
    return this.#mic?.getAudioTracks()[0] ?? null;
  }

  localVideoTrack(): MediaStreamTrack | null {
    return this.#camera?.getVideoTracks()[0] ?? null;
  }

  /** The demo avatar's mouth follows this level, so it is what the avatar "says". */
  avatarAudioLevel(): number {
    return this.#closed ? 0 : this.#level;
  }

  resumePlayback(): void {
    void this.#audio?.resume().catch(() => undefined);
  }

  async leave(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#joinTimer) clearTimeout(this.#joinTimer);
    this.#joinTimer = null;
    if (this.#qualityTimer) clearInterval(this.#qualityTimer);
    this.#qualityTimer = null;
    this.#recovery?.microphone.stop();
    this.#recovery?.camera.stop();
    this.#recovery = null;
    this.#unwatchDevices?.();
    this.#unwatchDevices = null;
    this.#trackListeners.abort();
    this.#channel?.release(); // a join still waiting ends (its caller sees the cancellation)
    this.#channel = null;
    this.#stopLocal();
    for (const t of this.#output?.getTracks() ?? []) t.stop();
    this.#output = null;
    // A picture made ahead (pre-join) but never shown: its stream ends too.
    void this.#picture?.then((p) => p.output.getTracks().forEach((t) => t.stop()), () => undefined);
    this.#picture = null;
    this.#voice?.pause();
    if (this.#voice) this.#voice.srcObject = null;
    this.#voice = null;
    const audio = this.#audio;
    this.#audio = null;
    this.#analyser = null;
    this.#source = null;
    await audio?.close().catch(() => undefined);
    if (this.#inCall) this.#view?.clear();
    this.#view = null;
    this.#setState('left');
    this.#events.clear();
  }

  /** RMS of the time-domain signal, eased and scaled into 0..1. */
  #readLevel(): number {
    if (!this.#analyser || !this.#samples) return 0;
    this.#analyser.getByteTimeDomainData(this.#samples);
    let sum = 0;
    for (const v of this.#samples) {
      const x = (v - 128) / 128;
      sum += x * x;
    }
    const rms = Math.sqrt(sum / this.#samples.length);
    const target = Math.min(1, rms * 6);
    // Fast attack, slower release: reads as speech, not flicker.
    return target > this.#level ? this.#level + (target - this.#level) * 0.6 : this.#level + (target - this.#level) * 0.2;
  }

  #stopLocal(): void {
    for (const s of [this.#mic, this.#camera]) for (const t of s?.getTracks() ?? []) t.stop();
    this.#mic = null;
    this.#camera = null;
  }

  #abort(): RtcError {
    this.#stopLocal();
    return cancelledError();
  }

  #setState(state: EngineState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#events.emit({ type: 'state', state });
  }
}

/** `navigator.mediaDevices`' devicechange, where there is one. */
function defaultDeviceChange(listener: () => void): () => void {
  const devices = (globalThis as { navigator?: { mediaDevices?: EventTarget } }).navigator?.mediaDevices;
  if (!devices?.addEventListener) return () => {};
  devices.addEventListener('devicechange', listener);
  return () => devices.removeEventListener('devicechange', listener);
}

/** The last decoded picture: the same avatar is drawn call after call (and decoded ahead by `preloadDemoImage`). */
let decoded: { url: string; image: Promise<AvatarImage | null> } | null = null;

/** Decode the avatar picture and paint its layers ahead of the first call (the attract screen calls this). */
export function preloadDemoImage(url: string | null): void {
  // A failure here is reported by the call that needs the picture.
  void loadImage(url).then((image) => prepareAvatarLayers(image, DEMO_WIDTH, DEMO_HEIGHT)).catch(() => undefined);
}

function loadImage(url: string | null): Promise<AvatarImage | null> {
  if (!url) return Promise.resolve(null);
  if (decoded?.url !== url) decoded = { url, image: decodeImage(url) };
  return decoded.image;
}

async function decodeImage(url: string): Promise<AvatarImage | null> {
  const img = new Image();
  img.decoding = 'async';
  img.src = url;
  try {
    await img.decode();
    return img;
  } catch {
    return null; // the silhouette is drawn instead
  }
}
