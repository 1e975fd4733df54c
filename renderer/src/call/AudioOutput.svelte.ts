/**
 * Private listening: staff choose the output the avatar's voice plays on (a headphone jack, a handset),
 * kept in this window's storage (it names a device of this machine, so it belongs to the machine, not
 * the venue's config). While the chosen output is plugged in, the attract screen tells visitors they
 * can listen on headphones; when it is missing the system default plays, as before.
 */
export interface OutputDevice {
  id: string;
  label: string;
}

export interface AudioOutputDeps {
  /** `navigator.mediaDevices` (null where there is none, e.g. tests). */
  devices: Pick<MediaDevices, 'enumerateDevices' | 'addEventListener' | 'removeEventListener'> | null;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null;
  /** Route the live call's audio (LiveCall.setAudioOutput). */
  apply: (deviceId: string) => Promise<void>;
}

export const AUDIO_OUTPUT_KEY = 'avatar-kiosk.audioOutput';

export class AudioOutput {
  readonly #deps: AudioOutputDeps;
  #outputs = $state<OutputDevice[]>([]);
  #chosen = $state('');

  constructor(deps: AudioOutputDeps) {
    this.#deps = deps;
    this.#chosen = deps.storage?.getItem(AUDIO_OUTPUT_KEY) ?? '';
  }

  /** Watch the outputs (plugging headphones in or out); returns the disposer. */
  start(): () => void {
    const devices = this.#deps.devices;
    if (!devices) return () => undefined;
    const refresh = () => void this.refresh();
    devices.addEventListener('devicechange', refresh);
    refresh();
    void this.#deps.apply(this.#chosen);
    return () => devices.removeEventListener('devicechange', refresh);
  }

  async refresh(): Promise<void> {
    const list = await this.#deps.devices?.enumerateDevices().catch(() => []);
    this.#outputs = (list ?? [])
      .filter((d) => d.kind === 'audiooutput' && d.deviceId !== 'default' && d.deviceId !== 'communications' && d.deviceId !== '')
      .map((d, i) => ({ id: d.deviceId, label: d.label || `Output ${i + 1}` }));
  }

  get outputs(): readonly OutputDevice[] {
    return this.#outputs;
  }
  /** The staff's choice ('' = the system default). */
  get chosen(): string {
    return this.#chosen;
  }
  /** A private output was chosen and is plugged in. */
  get hasPrivateOutput(): boolean {
    return this.#chosen !== '' && this.#outputs.some((o) => o.id === this.#chosen);
  }

  async choose(deviceId: string): Promise<void> {
    this.#chosen = deviceId;
    if (deviceId) this.#deps.storage?.setItem(AUDIO_OUTPUT_KEY, deviceId);
    else this.#deps.storage?.removeItem(AUDIO_OUTPUT_KEY);
    await this.#deps.apply(deviceId);
  }
}
