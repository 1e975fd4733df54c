/**
 * The browser mode's socket frames from the page, validated (types: electron/core/kiosk-api.ts). The
 * page's argument is not looked at here: the channel registry (kiosk/channels.ts) validates it with the
 * channel's schema.
 */
import { z } from 'zod';
import type { PageFrame } from '../core/kiosk-api.ts';

export const callFrameSchema = z.strictObject({
  type: z.literal('call'),
  id: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  channel: z.string().min(1).max(100),
  arg: z.unknown().optional(),
});
export const pageFrameSchema = z.discriminatedUnion('type', [callFrameSchema]);

// The schema and the type the page sends must agree (a compile error here otherwise).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree: Same<z.output<typeof pageFrameSchema>, PageFrame> = true;
void agree;

export type ParsedFrame = { ok: true; frame: PageFrame } | { ok: false; message: string };

/** A text frame → a frame of ours, or why not (never a throw). */
export function parsePageFrame(text: string): ParsedFrame {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, message: 'The frame is not JSON.' };
  }
  const parsed = pageFrameSchema.safeParse(raw);
  if (parsed.success) return { ok: true, frame: parsed.data as PageFrame };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length ? ` (${issue.path.join('.')})` : '';
  return { ok: false, message: `Not a frame of this protocol${where}: ${issue?.message ?? 'unexpected value'}.` };
}
