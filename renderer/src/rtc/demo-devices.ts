/**
 * Synthetic devices for demo mode (`npm start -- --demo-devices`, PublicConfig.demoDevices): a microphone
 * made by WebAudio (a soft tone in speech-like bursts, so the demo avatar visibly reacts) and a camera made
 * by a canvas's `captureStream` (a drawn figure with a moving sweep, so the self-view is visibly live).
 *
 * Why here, in the page's getUserMedia path, and not Chromium's fake-device flags: it works the same in
 * both hosts (Electron and browser mode) and in any browser a person opens the address in; it needs no
 * flag on a browser we may not have launched; and it can only feed the demo engine, because the real
 * engine (the Agora SDK) opens devices itself, and the host turns `demoDevices` off whenever a real key or
 * gateway is configured. Every stopped track releases what made it (oscillator, audio context, timer).
 */

export const SYNTHETIC_CAMERA_WIDTH = 640;
export const SYNTHETIC_CAMERA_HEIGHT = 480;
export const SYNTHETIC_CAMERA_FPS = 15;
/** One burst of "speech" and the pause after it. */
export const SYNTHETIC_BURST_MS = 1_400;
export const SYNTHETIC_PAUSE_MS = 900;

type GetUserMedia = (constraints: MediaStreamConstraints) => Promise<MediaStream>;

/** A getUserMedia that answers with synthetic devices while `useSynthetic()` holds, else with `real`. */
export function withDemoDevices(real: GetUserMedia, useSynthetic: () => boolean): GetUserMedia {
  return (constraints) => (useSynthetic() ? Promise.resolve(syntheticMedia(constraints)) : real(constraints));
}

/** A stream with a synthetic microphone and/or camera, as `constraints` ask. */
export function syntheticMedia(constraints: MediaStreamConstraints): MediaStream {
  const stream = new MediaStream();
  if (constraints.audio) stream.addTrack(syntheticMicrophone());
  if (constraints.video) stream.addTrack(syntheticCamera());
  return stream;
}

/** Run `release` once when the track is stopped (a stopped track fires no event of its own). */
function onStop(track: MediaStreamTrack, release: () => void): MediaStreamTrack {
  const stop = track.stop.bind(track);
  let released = false;
  track.stop = () => {
    stop();
    if (released) return;
    released = true;
    release();
  };
  return track;
}

function syntheticMicrophone(): MediaStreamTrack {
  const context = new AudioContext();
  const voice = context.createOscillator();
  voice.type = 'sawtooth';
  voice.frequency.value = 180;
  const level = context.createGain();
  level.gain.value = 0;
  const out = context.createMediaStreamDestination();
  voice.connect(level).connect(out);
  voice.start();
  void context.resume().catch(() => undefined);
  // Bursts of sound and pauses, like someone talking: the demo avatar's mouth follows the level.
  const period = SYNTHETIC_BURST_MS + SYNTHETIC_PAUSE_MS;
  const schedule = () => {
    const t = context.currentTime;
    level.gain.cancelScheduledValues(t);
    level.gain.setTargetAtTime(0.25, t, 0.05);
    level.gain.setTargetAtTime(0, t + SYNTHETIC_BURST_MS / 1000, 0.08);
    voice.frequency.setValueAtTime(160 + Math.random() * 60, t);
  };
  schedule();
  const timer = setInterval(schedule, period);
  const track = out.stream.getAudioTracks()[0]!;
  return onStop(track, () => {
    clearInterval(timer);
    voice.stop();
    void context.close().catch(() => undefined);
  });
}

function syntheticCamera(): MediaStreamTrack {
  const canvas = document.createElement('canvas');
  canvas.width = SYNTHETIC_CAMERA_WIDTH;
  canvas.height = SYNTHETIC_CAMERA_HEIGHT;
  const g = canvas.getContext('2d')!;
  const startedAt = performance.now();
  const draw = () => {
    const w = canvas.width;
    const h = canvas.height;
    const t = (performance.now() - startedAt) / 1000;
    const sky = g.createLinearGradient(0, 0, 0, h);
    sky.addColorStop(0, '#24435e');
    sky.addColorStop(1, '#0e1b28');
    g.fillStyle = sky;
    g.fillRect(0, 0, w, h);
    // A visitor: head and shoulders, swaying a little.
    const x = w / 2 + Math.sin(t * 0.8) * 18;
    g.fillStyle = '#d9b38c';
    g.beginPath();
    g.arc(x, h * 0.42, h * 0.13, 0, Math.PI * 2);
    g.fill();
    g.fillStyle = '#3f7f6e';
    g.beginPath();
    g.ellipse(x, h * 0.95, w * 0.26, h * 0.32, 0, Math.PI, 0);
    g.fill();
    // A sweep that moves every frame, so a frozen picture is obvious.
    g.fillStyle = 'rgba(255,255,255,0.18)';
    g.fillRect(((t * 160) % (w + 40)) - 40, 0, 40, h);
  };
  draw();
  const timer = setInterval(draw, 1000 / SYNTHETIC_CAMERA_FPS);
  const track = canvas.captureStream(SYNTHETIC_CAMERA_FPS).getVideoTracks()[0]!;
  return onStop(track, () => clearInterval(timer));
}
