/**
 * The avatar service's figures (../shared/spec/avatar-service.md), each named once here with the section
 * that states it. Every use, in the client, the emulator, the kiosk and the renderer, goes through these
 * names, and a comment that needs a figure names the constant rather than repeating the number, so
 * the spec changing one figure is a change to one line. Dependency-free, so the renderer can bundle it;
 * protocol.ts re-exports all of it next to the wire schemas.
 */

/** §6 rule 2, §8: after a NOT_READY answer, reconnect after 2 s, then 4 s, then 8 s (the recommended backoff). */
export const NOT_READY_BACKOFF_MS = [2_000, 4_000, 8_000] as const;
/** §6 rule 4, §8: the server pings every 5 s. */
export const SERVER_PING_INTERVAL_MS = 5_000;
/** §6 rule 4, §8: a client that sends nothing for 15 s is treated as dead and force-disconnected. */
export const CLIENT_SILENCE_LIMIT_MS = 15_000;
/** §8: a control WebSocket message is at most 64 KB. */
export const MAX_WS_MESSAGE_BYTES = 64 * 1024;
/** §6: `payload.conn_init.version` is always 1. */
export const CONN_INIT_VERSION = 1;

/** §2.1, §8, §9: `live_duration`, the longest a session lasts, is capped at 600 s in the beta. */
export const MAX_LIVE_DURATION_S = 600;
/** §2.2, §8: the RTC token is valid about one hour; an expired one needs a new session (§7). */
export const RTC_TOKEN_VALIDITY_S = 3_600;

/** §3, §7, §8: a session starts only with a balance of at least 45 credits (checked at launch, never mid-call). */
export const MIN_BALANCE_TO_START = 45;
/** §8: billed time rounds up to whole units of 2 s (11 s bills as 12 s). */
export const BILLING_UNIT_S = 2;
/** §8: each billing unit live costs 3 credits (about 90 a minute), audio and video alike. */
export const CREDITS_PER_BILLING_UNIT = 3;
/** §8: credits a new account starts with. */
export const TRIAL_CREDITS = 1_000;
/** §8: the first 10 voice clones of an account are free ... */
export const FREE_VOICE_CLONES = 10;
/** ... and each one after them costs 899 credits (§8). */
export const VOICE_CLONE_COST = 899;

/** §2.3, §8: an avatar image is at most 50 MB (by URL). */
export const MAX_IMAGE_BYTES = 50 * 1024 * 1024;
/** §2.3, §8: a Base64 image must decode to under 20 MB. */
export const MAX_BASE64_IMAGE_BYTES = 20 * 1024 * 1024;
/** §2.3, §8: an avatar name of 20 characters or fewer is recommended. */
export const RECOMMENDED_NAME_LENGTH = 20;

/** §1, §8: the avatar's video is streamed at 540P ... */
export const OUTPUT_VIDEO_HEIGHT_PX = 540;
/** ... and 25 frames a second (§1, §8). */
export const OUTPUT_VIDEO_FPS = 25;
