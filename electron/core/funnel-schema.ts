/**
 * The bounds a receiver holds a visitor funnel to (the console's intake, the kiosk's file read back).
 * Apart from funnel.ts because the renderer bundles funnel.ts and must not carry zod.
 */
import { z } from 'zod';

// A count is a whole number a kiosk could reach; a breakdown has few keys and short ones.
const COUNT_MAX = 10_000_000;
const count = z.number().int().min(0).max(COUNT_MAX);
const breakdown = z.record(z.string().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/), z.object({ tapped: count, live: count }).strict()).refine((r) => Object.keys(r).length <= 64, 'at most 64 keys');

export const funnelCountsSchema = z
  .object({
    noticed: count,
    approached: count,
    greeted: count,
    tapped: count,
    refused: z.object({ ageGate: count, closed: count, outOfOrder: count }).strict(),
    gaveUp: count,
    failed: count,
    live: count,
    endedWell: count,
    endedBadly: count,
    callLength: z.object({ under1m: count, from1to3m: count, from3to10m: count, over10m: count }).strict(),
    byLanguage: breakdown,
    byCallMode: breakdown,
    byAvatar: breakdown,
  })
  .strict();

export const funnelDaySchema = z.object({ day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), counts: funnelCountsSchema }).strict();
