/**
 * The Diagnostics tab's state: main's checks (the "doctor": config, key, service) and this screen's
 * devices (`DeviceCheck`).
 */
import type { DoctorReport, ErrorInfo } from '../../../electron/contract.ts';
import { analyserLevelSource, meterLevel, toDbfs, type LevelSource } from '../sensing/voice-activity.ts';
import { StaffValue, type StaffCalls } from './calls.svelte.ts';

/** Main's checks; a test session is created and closed at once, so nothing is charged. */
export class Doctor extends StaffValue<DoctorReport> {
  constructor(calls: StaffCalls) {
    super(calls, (s) => s.runDoctor());
  }

  /** Null while the checks run (and until they first ran). */
  get report(): DoctorReport | null {
    return this.value;
  }

  async run(): Promise<ErrorInfo | null> {
    this.clear();
    return this.load();
  }
}

export type DeviceStatus = 'idle' | 'checking' | 'ok' | 'missing' | 'denied' | 'failed';

export interface DeviceResult {
  status: DeviceStatus;
  /** A human sentence (device label or what went wrong). */
  message: string;
}

/**
 * Is there a microphone and a camera, with a live level meter and a camera preview. Runs getUserMedia in
 * the renderer (main cannot see devices) and releases everything on `stop()`. The microphone is opened
 * with echo cancellation, like a call.
 */
export class DeviceCheck {
  readonly #getUserMedia: (c: MediaStreamConstraints) => Promise<MediaStream>;
  #microphone = $state<DeviceResult>({ status: 'idle', message: '' });
  #camera = $state<DeviceResult>({ status: 'idle', message: '' });
  #level = $state(0);
  #cameraStream = $state<MediaStream | null>(null);
  #micStream: MediaStream | null = null;
  #source: LevelSource | null = null;
  #timer: ReturnType<typeof setInterval> | null = null;
  #generation = 0;

  constructor(getUserMedia: (c: MediaStreamConstraints) => Promise<MediaStream>) {
    this.#getUserMedia = getUserMedia;
  }

  get microphone(): DeviceResult {
    return this.#microphone;
  }
  get camera(): DeviceResult {
    return this.#camera;
  }
  /** The microphone's level, 0..1. */
  get level(): number {
    return this.#level;
  }
  get cameraStream(): MediaStream | null {
    return this.#cameraStream;
  }

  async start(): Promise<void> {
    this.stop();
    const generation = ++this.#generation;
    this.#microphone = { status: 'checking', message: 'Checking the microphone…' };
    this.#camera = { status: 'checking', message: 'Checking the camera…' };
    await Promise.all([this.#startMicrophone(generation), this.#startCamera(generation)]);
  }

  stop(): void {
    this.#generation++;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#source?.close();
    this.#source = null;
    for (const s of [this.#micStream, this.#cameraStream]) for (const t of s?.getTracks() ?? []) t.stop();
    this.#micStream = null;
    this.#cameraStream = null;
    this.#level = 0;
  }

  async #startMicrophone(generation: number): Promise<void> {
    try {
      const stream = await this.#getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true }, video: false });
      if (generation !== this.#generation) return stopAll(stream);
      this.#micStream = stream;
      const track = stream.getAudioTracks()[0];
      this.#microphone = { status: 'ok', message: track?.label ? `Found: ${track.label}` : 'A microphone is present.' };
      this.#source = analyserLevelSource<AnalyserNode>(stream, new AudioContext());
      this.#timer = setInterval(() => {
        const level = meterLevel(toDbfs(this.#source?.readRms() ?? 0));
        this.#level = Math.max(level, this.#level * 0.85); // quick rise, gentle fall
      }, 80);
    } catch (err) {
      if (generation === this.#generation) this.#microphone = describe(err, 'microphone');
    }
  }

  async #startCamera(generation: number): Promise<void> {
    try {
      const stream = await this.#getUserMedia({ audio: false, video: { width: { ideal: 640 }, height: { ideal: 480 } } });
      if (generation !== this.#generation) return stopAll(stream);
      this.#cameraStream = stream;
      const track = stream.getVideoTracks()[0];
      this.#camera = { status: 'ok', message: track?.label ? `Found: ${track.label}` : 'A camera is present.' };
    } catch (err) {
      if (generation === this.#generation) this.#camera = describe(err, 'camera');
    }
  }
}

function stopAll(stream: MediaStream): void {
  for (const t of stream.getTracks()) t.stop();
}

function describe(err: unknown, device: 'microphone' | 'camera'): DeviceResult {
  const name = typeof err === 'object' && err !== null && 'name' in err ? String((err as { name: unknown }).name) : '';
  if (/NotAllowed|Permission|Security/i.test(name)) return { status: 'denied', message: `Access to the ${device} was denied.` };
  if (/NotFound|Overconstrained/i.test(name)) return { status: 'missing', message: `No ${device} was found.` };
  if (/NotReadable/i.test(name)) return { status: 'failed', message: `The ${device} is in use or not working.` };
  return { status: 'failed', message: `The ${device} could not be started.` };
}
