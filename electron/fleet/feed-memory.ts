/**
 * The newest signed statement (feed-binding.ts) of each channel's current file this kiosk has read, kept in
 * its data folder so that a restart does not forget it: an older statement served again (the feed as it was
 * before the operator set `stagingPercentage: 0`) is refused, and a pin below the signer's floor too.
 *
 * The file is checked when read, like anything from disk: a damaged or foreign one is not used (logged, and
 * said in `problem`); until the kiosk reads its channel again it knows no newer feed, so only the statements'
 * expiry bounds a replay meanwhile. Written whole (a temporary file renamed over it), owner-only.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { silentLogger, type Logger } from '../core/log.ts';
import { isVersion, type SeenFeed } from './feed-binding.ts';

export const FEED_MEMORY_FILE = 'update-feeds.json';
/** Channels remembered at most (a kiosk follows one; a few more after channel changes). */
const MAX_CHANNELS = 16;

const seenSchema = z.strictObject({
  signedAt: z.iso.datetime(),
  version: z.string().refine(isVersion),
  minVersion: z.string().refine(isVersion),
});
const fileSchema = z.strictObject({
  v: z.literal(1),
  channels: z.record(z.string().regex(/^[a-z0-9-]{1,32}$/), seenSchema).refine((c) => Object.keys(c).length <= MAX_CHANNELS, `at most ${MAX_CHANNELS} channels`),
});

export interface FeedMemory {
  /** The newest statement of `channel`'s current file read so far, or null. */
  newest(channel: string): SeenFeed | null;
  /** A statement of `channel`'s current file was accepted: kept when it is the newest so far. */
  saw(channel: string, seen: SeenFeed): void;
  /** Why the file on disk was not used (null: it was, or there was none). */
  readonly problem: string | null;
}

export function openFeedMemory(dir: string, logger: Logger = silentLogger): FeedMemory {
  const path = join(dir, FEED_MEMORY_FILE);
  const channels = new Map<string, SeenFeed>();
  let problem: string | null = null;
  let text: string | null = null;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ENOENT') problem = `${path} could not be read (${code ?? String(error)})`;
  }
  if (text !== null) {
    let parsed: ReturnType<typeof fileSchema.safeParse> | null = null;
    try {
      parsed = fileSchema.safeParse(JSON.parse(text));
    } catch {
      problem = `${path} is not JSON`;
    }
    if (parsed?.success) for (const [channel, seen] of Object.entries(parsed.data.channels)) channels.set(channel, seen);
    else if (parsed) problem = `${path} is not as this kiosk writes it (${parsed.error.issues[0]?.path.join('.') || 'the file'}: ${parsed.error.issues[0]?.message})`;
  }
  if (problem) {
    problem = `${problem}: started without it, so until this kiosk reads its channel again only the feeds' expiry keeps an older one out`;
    logger.error('Updates: the newest feeds seen could not be read', { problem });
  }

  const save = () => {
    try {
      mkdirSync(dir, { recursive: true });
      const tmp = `${path}.tmp`;
      writeFileSync(tmp, `${JSON.stringify({ v: 1, channels: Object.fromEntries(channels) })}\n`, { mode: 0o600 });
      renameSync(tmp, path);
    } catch (error) {
      logger.error('Updates: the newest feed seen could not be saved; after a restart an older one could be accepted until it expires', { error: String(error) });
    }
  };

  return {
    newest: (channel) => channels.get(channel) ?? null,
    saw(channel, seen) {
      const kept = channels.get(channel);
      if (kept && Date.parse(kept.signedAt) >= Date.parse(seen.signedAt)) return;
      channels.delete(channel);
      channels.set(channel, { signedAt: seen.signedAt, version: seen.version, minVersion: seen.minVersion });
      while (channels.size > MAX_CHANNELS) channels.delete(channels.keys().next().value!);
      save();
    },
    get problem() {
      return problem;
    },
  };
}
