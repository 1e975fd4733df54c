/**
 * Whether a call may start, as the renderer and staff are told: the service's health, a hold while an
 * update installs, and the opening hours. Part of the IPC contract (electron/contract.ts re-exports it).
 */

/**
 * Whether the kiosk can reach its service, as checked at start-up and after each settings change (a read
 * that creates nothing and bills nothing), then again with backoff while it cannot:
 * `checking` (not known yet), `demo` (the built-in emulator), `connected`, `wrong_scheme` (a URL that is
 * not https://), `no_url` (a key but no service URL), `unreachable` (no answer), `refused_key` (HTTP 401/403),
 * `not_service` (something answered, but not as the avatar service), `misconfigured` (any other setting).
 */
export const SERVICE_HEALTH_STATUSES = ['checking', 'demo', 'connected', 'wrong_scheme', 'no_url', 'unreachable', 'refused_key', 'not_service', 'misconfigured'] as const;
export type ServiceHealthStatus = (typeof SERVICE_HEALTH_STATUSES)[number];
export interface ServiceHealth {
  status: ServiceHealthStatus;
  /** A call can start (connected, demo, or not known yet). */
  ok: boolean;
  /** What is the case, for staff (English, one sentence or two). */
  message: string;
  /** What to do about it (null when nothing is to be done). */
  action: string | null;
  /** When it was last checked (ms since the epoch), or null before the first check. */
  checkedAtMs: number | null;
  /** When it is checked again by itself (ms since the epoch), or null when only a settings change will. */
  nextCheckAtMs: number | null;
}

/** Why new calls wait: `updating` from the decision to install an update until the app quits for it. */
export type HoldReason = 'updating';

/** Opening hours (`schedule`): outside them the attract screen says closed and main refuses calls. */
export interface OpeningInfo {
  open: boolean;
  /** While closed: the next opening (ISO), or null when none is scheduled soon. */
  nextOpenAt: string | null;
  /** The venue's time zone, to show the opening time in (null: no schedule). */
  timeZone: string | null;
}
