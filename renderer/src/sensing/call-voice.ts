/**
 * Voice activity for a live call: measure the visitor's LOCAL microphone track, never the avatar's.
 *
 * The demo and agora-web engines expose the track they captured with echo cancellation on
 * (`RtcEngine.localAudioTrack`). The native engine captures inside its addon, so there we open our own
 * echo-cancelled capture of the default microphone for measuring only (it is never published) and stop
 * it with the detector. If nothing can be measured, the result is null: the idle watch then treats the
 * visitor as silent and a touch (or "Keep talking") is what keeps the call going.
 */
import { startVoiceActivity, type EnergyVoiceActivity, type VoiceActivityOptions } from './voice-activity.ts';

export interface CallVoice {
  readonly detector: EnergyVoiceActivity;
  /** Stop the detector and any capture opened for it. Idempotent. */
  close(): void;
}

export async function openCallVoice(
  localTrack: MediaStreamTrack | null,
  getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>,
  options: Partial<VoiceActivityOptions> = {},
): Promise<CallVoice | null> {
  try {
    if (localTrack && localTrack.readyState === 'live') {
      const detector = startVoiceActivity(localTrack, options);
      return { detector, close: () => detector.stop() };
    }
    const stream = await getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: false }, video: false });
    const track = stream.getAudioTracks()[0];
    if (!track) {
      for (const t of stream.getTracks()) t.stop();
      return null;
    }
    const detector = startVoiceActivity(track, options);
    return {
      detector,
      close: () => {
        detector.stop();
        for (const t of stream.getTracks()) t.stop();
      },
    };
  } catch (err) {
    console.warn('voice activity unavailable', err instanceof Error ? err.message : String(err));
    return null;
  }
}
