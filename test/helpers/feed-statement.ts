/**
 * A signed feed statement (electron/fleet/feed-binding.ts) for unit tests: one that fits a kiosk on the
 * "latest" channel for linux, reading the channel's current file, unless the test says otherwise.
 */
import { STATEMENT_FORMAT, type FeedStatement } from '../../electron/fleet/feed-binding.ts';
import { feedFileSha512, signFeedStatement } from '../../electron/fleet/signed-feed.ts';

export const SIGNED_AT = '2026-11-24T18:00:00.000Z';
export const EXPIRES_AT = '2026-12-24T18:00:00.000Z';

export function statementFor(content: string | Buffer, over: Partial<FeedStatement> = {}): FeedStatement {
  return { format: STATEMENT_FORMAT, channel: 'latest', platform: 'linux', version: '1.2.0', pinned: false, minVersion: '1.2.0', sha512: feedFileSha512(content), signedAt: SIGNED_AT, expiresAt: EXPIRES_AT, ...over };
}

/** The signature file for `content`, signed with `privateKeyPem`, the statement adjusted by `over`. */
export function signedFor(content: string | Buffer, privateKeyPem: string, over: Partial<FeedStatement> = {}): string {
  return signFeedStatement(statementFor(content, over), privateKeyPem);
}
