/**
 * What a feed signature is for. A signature over a channel file's bytes alone says "the fleet made this
 * file", not "install this here, now": the same file served under another channel's name, replayed after the
 * operator changed it, or kept for a rollback long after it should be, verifies just as well. So
 * `cli update-sign` signs a statement about the file instead (`FeedStatement`): its sha512, the channel and
 * platform it is for, the version it offers, whether it is the channel's current file or the copy kept in a
 * version's folder for pinned kiosks, the lowest version the signer allows on the fleet (`minVersion`), when
 * it was signed and when it expires. The kiosk checks each against what it asked for (`statementProblem`)
 * and remembers the newest statement per channel (feed-memory.ts), so an older one served again is
 * refused. Pure; electron-free.
 */
import semver from 'semver';
import { z } from 'zod';

export const STATEMENT_FORMAT = 'avatar-kiosk-feed/1';
/** How long a signature holds when `update-sign` is not told otherwise, and at most. */
export const DEFAULT_EXPIRY_DAYS = 30;
export const MAX_EXPIRY_DAYS = 366;
/** A statement signed further ahead of the kiosk's clock is refused: remembered as the newest, it would
 *  refuse every honest feed signed before that time (a release machine whose clock was set wrong). */
export const FUTURE_TOLERANCE_MS = 24 * 60 * 60_000;

/** A release version as semver writes it ("1.4.2", "2.0.0-beta.1"). */
export function isVersion(v: unknown): v is string {
  return typeof v === 'string' && v.length <= 64 && semver.valid(v) === v;
}

const version = z.string().refine(isVersion, 'must be a version such as "1.4.2"');
const time = z.iso.datetime({ message: 'must be an ISO time in UTC' });

export const feedStatementSchema = z.strictObject({
  format: z.literal(STATEMENT_FORMAT),
  /** The channel file's channel (`latest`, `beta`…) and platform (`windows`, `mac`, `linux`, `linux-arm64`…). */
  channel: z.string().regex(/^[a-z0-9-]{1,32}$/),
  platform: z.string().regex(/^(windows|mac|linux(-[a-z0-9]{1,16})?)$/),
  /** The version the channel file offers. */
  version,
  /** The copy kept in `<feed>/<version>/` for kiosks pinned to that version, not the channel's current file. */
  pinned: z.boolean(),
  /** No kiosk of this channel goes below it (a pin under it is refused): the signer's floor. */
  minVersion: version,
  /** sha512 of the channel file's exact bytes, base64. */
  sha512: z.string().regex(/^[A-Za-z0-9+/]{86}==$/),
  signedAt: time,
  expiresAt: time,
});
export type FeedStatement = z.infer<typeof feedStatementSchema>;

/** The newest statement of a channel's current file a kiosk has read (feed-memory.ts keeps it). */
export interface SeenFeed {
  signedAt: string;
  version: string;
  /** The signer's floor as of that statement. */
  minVersion: string;
}

/**
 * A channel file's channel and platform, from its name as electron-builder writes it and electron-updater
 * asks for it: `<channel>.yml` (Windows), `<channel>-mac.yml`, `<channel>-linux.yml`, `<channel>-linux-<arch>.yml`.
 * Null for any other name. (A Windows channel whose own name ends in "-mac" or "-linux" would read as
 * another platform's: name channels without those endings.)
 */
export function channelFileParts(name: string): { channel: string; platform: string } | null {
  const m = /^([a-z0-9-]{1,32}?)(-mac|-linux(?:-[a-z0-9]{1,16})?)?\.yml$/.exec(name);
  if (!m) return null;
  return { channel: m[1]!, platform: platformOfSuffix(m[2] ?? '') };
}

/** The platform named by electron-updater's channel-file suffix ("" on Windows, "-mac", "-linux-arm64"). */
export function platformOfSuffix(suffix: string): string {
  return suffix === '' ? 'windows' : suffix.slice(1);
}

/** What the kiosk asked for, to hold a verified statement against. */
export interface FeedExpectation {
  channel: string;
  platform: string;
  /** The version whose folder this kiosk reads (it is pinned to it), or null: the channel's current file. */
  pinned: string | null;
  nowMs: number;
  /** The newest statement of this channel the kiosk read before, or null. */
  newest: SeenFeed | null;
}

/**
 * Why an update-pin to `version` is refused, given the floor this kiosk last read from its channel (null:
 * allowed). One sentence, for the operator who sent it.
 */
export function pinRefusal(version: string, floor: string | null): string | null {
  if (!isVersion(version) || !isVersion(floor) || !semver.lt(version, floor)) return null;
  return `${version} is below the lowest version the fleet's signer allows (${floor}). To roll back on purpose, sign the feed again with \`update-sign --min-version ${version}\`, let the kiosks read it (update-check), then pin again`;
}

/** Why a statement that carries the fleet's signature does not fit what the kiosk asked for (null: it fits). */
export function statementProblem(file: string, s: FeedStatement, expect: FeedExpectation): string | null {
  if (s.channel !== expect.channel) return `${file} was signed for the "${s.channel}" channel; this kiosk follows "${expect.channel}"`;
  if (s.platform !== expect.platform) return `${file} was signed for ${s.platform}; this kiosk runs ${expect.platform}`;
  if (expect.pinned === null && s.pinned) return `${file} was signed as the copy of ${s.version} kept for kiosks pinned to it, not as the channel's current release`;
  if (expect.pinned !== null && (!s.pinned || s.version !== expect.pinned)) {
    return `${file} was signed as ${s.pinned ? `the copy of ${s.version}` : "the channel's current release"}, not as the copy of ${expect.pinned} this kiosk is pinned to`;
  }
  const now = new Date(expect.nowMs).toISOString();
  if (expect.nowMs >= Date.parse(s.expiresAt)) return `${file} expired at ${s.expiresAt} (signed ${s.signedAt}; this kiosk's clock says ${now}): sign the feed again with update-sign`;
  if (Date.parse(s.signedAt) - expect.nowMs > FUTURE_TOLERANCE_MS) return `${file} was signed at ${s.signedAt}, more than a day ahead of this kiosk's clock (${now}): check the release machine's clock, or this kiosk's`;
  if (semver.lt(s.version, s.minVersion)) return `${file} offers ${s.version}, below the lowest version its signer allows (${s.minVersion})`;
  const newest = expect.newest;
  if (!newest) return null;
  if (!s.pinned && Date.parse(s.signedAt) < Date.parse(newest.signedAt)) {
    return `${file} was signed at ${s.signedAt}, before the one this kiosk already read (signed ${newest.signedAt}): an older feed served again is refused`;
  }
  const below = s.pinned ? pinRefusal(s.version, newest.minVersion) : null;
  return below === null ? null : `${file}: ${below}`;
}
