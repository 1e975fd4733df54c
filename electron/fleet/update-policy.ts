/**
 * Safe updates, the decisions (electron-free, pure; the clock is a parameter): which feed to read, whether
 * an offered version is for this kiosk (the policy's pinned version; the feed's staged rollout), and when
 * a downloaded update may be installed (never during a call; outside the opening hours, or after the
 * kiosk has been idle a while). safe-updates.ts carries them out with electron-updater.
 *
 * Feed layout (a "generic" electron-updater feed, docs/fleet.md): `<update.url>/<channel>.yml` and the
 * installers for the current release, and every release also kept in `<update.url>/<version>/`, so a
 * pinned kiosk reads `<update.url>/<pinVersion>/` and goes back (or stays) there.
 */
import { createHash } from 'node:crypto';
import type { UpdateSettings } from '../kiosk/fleet-config.ts';
import type { OpeningState } from './opening-hours.ts';

export interface UpdateFeed {
  url: string;
  channel: string;
  /** A pinned version may be older than the running one (the rollback). */
  allowDowngrade: boolean;
  pinned: string | null;
}

/** The feed to read, or null when there is nothing to do (no URL, or already on the pinned version). */
export function updateFeed(settings: UpdateSettings | undefined, currentVersion: string): UpdateFeed | null {
  if (!settings?.url) return null;
  const base = settings.url.replace(/\/+$/, '');
  if (settings.pinVersion) {
    if (settings.pinVersion === currentVersion) return null;
    return { url: `${base}/${settings.pinVersion}`, channel: settings.channel, allowDowngrade: true, pinned: settings.pinVersion };
  }
  return { url: base, channel: settings.channel, allowDowngrade: false, pinned: null };
}

/** This kiosk's place in a staged rollout, 0 ≤ n < 100, stable for its id (so an operator can tell which
 *  kiosks a 10 % stage reaches, and a kiosk never flips in and out between checks). */
export function stagingBucket(kioskId: string): number {
  return (createHash('sha256').update(`avatar-kiosk-staging:${kioskId}`).digest().readUInt32BE(0) / 0x1_0000_0000) * 100;
}

export interface OfferedUpdate {
  version: string;
  /** The feed's `stagingPercentage` (0-100); absent: everyone. */
  stagingPercentage?: number | string | undefined;
}

/** Whether an update the feed offers is for this kiosk. */
export function offerAccepted(feed: UpdateFeed, offered: OfferedUpdate, bucket: number): { accept: boolean; reason: string } {
  if (feed.pinned) {
    return offered.version === feed.pinned
      ? { accept: true, reason: `the pinned version ${feed.pinned}` }
      : { accept: false, reason: `pinned to ${feed.pinned}; the feed offers ${offered.version}` };
  }
  const raw = offered.stagingPercentage;
  if (raw === undefined || raw === null || raw === '') return { accept: true, reason: 'no staged rollout' };
  const pct = typeof raw === 'number' ? raw : Number.parseFloat(raw);
  if (!Number.isFinite(pct)) return { accept: true, reason: 'no valid staging percentage' };
  return bucket < pct
    ? { accept: true, reason: `inside the ${pct} % stage (kiosk at ${bucket.toFixed(1)})` }
    : { accept: false, reason: `outside the ${pct} % stage (kiosk at ${bucket.toFixed(1)})` };
}

export interface InstallInputs {
  nowMs: number;
  /** A call (or its start) is under way. */
  inCall: boolean;
  /** Null when no opening hours are set. */
  opening: OpeningState | null;
  /** When the last call ended or started (or the app started), ms. */
  lastActivityMs: number;
  idleMinutes: number;
}

/** Whether a downloaded update may be installed now; if not, when to look again. */
export function installDecision(input: InstallInputs): { install: boolean; reason: string; retryAtMs: number | null } {
  if (input.inCall) return { install: false, reason: 'a call is under way', retryAtMs: null };
  if (input.opening && !input.opening.open) return { install: true, reason: 'outside the opening hours', retryAtMs: null };
  const idleUntil = input.lastActivityMs + input.idleMinutes * 60_000;
  if (input.nowMs >= idleUntil) return { install: true, reason: `idle for ${input.idleMinutes} minutes`, retryAtMs: null };
  const closesAt = input.opening?.open ? input.opening.nextChangeAtMs : null;
  return { install: false, reason: 'the kiosk is in use', retryAtMs: Math.min(idleUntil, closesAt ?? Number.POSITIVE_INFINITY) };
}

/**
 * How this installation is updated, decided from what the build wrote (`package-type` in a deb/rpm) and
 * how the app runs. Every in-app model installs without an administrator: the NSIS installer is per
 * user (no UAC prompt, the kiosk user owns the files), the Mac updater replaces an app the kiosk user may
 * write, an AppImage replaces its own file. A deb (or rpm) would need root (`pkexec dpkg -i`, a polkit
 * prompt nobody answers at a kiosk), so those installs are updated by the OS's package manager or MDM and
 * the in-app updater stays off; the status says so.
 */
export type InstallModel =
  | { inApp: true; kind: 'nsis-per-user' | 'mac-zip' | 'appimage' }
  | { inApp: false; kind: 'os-package-manager' | 'not-packaged' | 'unsupported'; why: string };

export function installModel(input: { platform: NodeJS.Platform; isPackaged: boolean; packageType: string | null; appImage: boolean }): InstallModel {
  if (!input.isPackaged) return { inApp: false, kind: 'not-packaged', why: 'running from a checkout: nothing to update' };
  if (input.platform === 'win32') return { inApp: true, kind: 'nsis-per-user' };
  if (input.platform === 'darwin') return { inApp: true, kind: 'mac-zip' };
  if (input.platform === 'linux') {
    const type = input.packageType?.trim() ?? null;
    if (type === 'deb' || type === 'rpm' || type === 'pacman') {
      return { inApp: false, kind: 'os-package-manager', why: `installed as a ${type} package: updated by the system's package manager (apt repository, unattended-upgrades or MDM), not by the app` };
    }
    if (input.appImage) return { inApp: true, kind: 'appimage' };
    return { inApp: false, kind: 'unsupported', why: 'an unpacked Linux build cannot update itself; install the deb' };
  }
  return { inApp: false, kind: 'unsupported', why: `no updater for ${input.platform}` };
}
