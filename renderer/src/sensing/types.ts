/**
 * The shared vocabulary of the renderer's local sensing: is the visitor talking (voice activity on the
 * echo-cancelled microphone) and is someone in front of the kiosk (presence from the camera). Built
 * once here and used by both the idle hang-up (staff operations) and approach detection (fast start).
 *
 * Privacy: detectors read frames and samples inside the renderer only; nothing is stored or sent.
 * Only the boolean signals below (and coarse levels for a meter) leave a detector.
 */

/** A boolean signal that changes over time. `value` is null while unknown (not started, no device). */
export interface Signal {
  readonly value: boolean | null;
  /** Called on every change of `value` (not on repeats). Returns the unsubscribe function. */
  onChange(listener: (value: boolean | null) => void): () => void;
}

/** Voice activity of the visitor: true while they speak (with hysteresis), from the mic after AEC. */
export interface VoiceActivityDetector extends Signal {
  /** The last measured level, 0..1 (RMS scaled), for a level meter. */
  readonly level: number;
  /** Stop reading the stream and release the audio graph. Idempotent. */
  stop(): void;
}

/** Presence in front of the camera: true while someone is there (with hysteresis). */
export interface PresenceDetector extends Signal {
  /** Stop reading frames and release resources. Idempotent. */
  stop(): void;
}
