/**
 * Who the kiosk is for, and what it tells visitors: the audience (`public`, the default, or `adult`),
 * the adult experience's rules (where it is allowed, the minimum age, who checks it), the venue's region
 * and its privacy notice. The schemas live here beside config.ts (one config file, one schema); what
 * the kiosk makes of them is `resolveSafety` below. Electron-free.
 *
 * Safe by default: a kiosk is public unless an administrator says otherwise, and a public kiosk asks the
 * service for `moderation: "strict"` on every create (spec §1 leaves age gating, consent and jurisdiction
 * to the integrator; spec §4.1: the gateway's default is `disabled`, the direct surface's is not shown).
 * Who may say `adult`: the policy file; or, where no policy file exists, config.json (which the staff
 * panel writes behind the PIN). A policy file that exists always locks these keys (managed-config.ts), so
 * neither config.json nor a fleet `apply` can turn a managed kiosk adult.
 */
import { z } from 'zod';
import { LANGUAGE_CODES } from '../core/languages.ts';
import type { Moderation } from '../core/protocol.ts';
import type { PublicSafety } from '../contract.ts';
import { qrDrawing } from './privacy-qr.ts';

export const AUDIENCES = ['public', 'adult'] as const;
export type Audience = (typeof AUDIENCES)[number];
export const AGE_CHECKS = ['self', 'staff'] as const;
export type AgeCheck = (typeof AGE_CHECKS)[number];

/** The keys that decide the audience: a policy file that exists always locks them (managed-config.ts). */
export const SAFETY_KEYS = ['audience', 'adult', 'region'] as const;

/** ISO 3166-1 alpha-2 ("DE"), or an ISO 3166-2 subdivision ("US-CA"). */
export const regionSchema = z.string().regex(/^[A-Z]{2}(-[A-Z0-9]{1,3})?$/, 'must be an ISO 3166 code such as "DE" or "US-CA" (upper case)');

export const DEFAULT_MINIMUM_AGE = 18;

export const adultSchema = z.strictObject({
  /** Where the adult experience may run: countries ("DE": all of Germany) or subdivisions ("US-NV"). */
  allowedRegions: z.array(regionSchema).max(300).default([]),
  /** The age a visitor confirms before each adult call. */
  minimumAge: z.number().int().min(13).max(25).default(DEFAULT_MINIMUM_AGE),
  /** `self`: the visitor confirms on screen; `staff`: a member of staff unlocks each call with the PIN. */
  ageCheck: z.enum(AGE_CHECKS).default('self'),
});
export type AdultSettings = z.output<typeof adultSchema>;

const noticeText = z.string().min(1).max(600);
export const privacySchema = z.strictObject({
  /** The venue's privacy notice, one text per language (a language without one shows the first given). */
  notice: z
    .partialRecord(z.enum(LANGUAGE_CODES), noticeText)
    .refine((m) => Object.keys(m).length > 0, 'needs at least one language')
    .optional(),
  /** Where the full notice is: drawn as a QR code on the kiosk (no network), and printed beside it. */
  url: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .max(300)
    .optional(),
});
export type PrivacySettings = z.output<typeof privacySchema>;

/** What the kiosk runs as, once the settings were checked against each other. */
export interface SafetyPosture {
  /** What the kiosk runs as. */
  audience: Audience;
  /** What the settings asked for (differs from `audience` when adult was refused). */
  requested: Audience;
  /** Sent on every create, spares included: `strict` for a public kiosk. */
  moderation: Moderation;
  /** The venue's region (ISO 3166), or null when not set. */
  region: string | null;
  /** Why adult was asked for and refused, for staff and the fleet (null when not refused). */
  refusal: string | null;
  /** The age gate (adult only; null for a public kiosk). */
  ageGate: { minimumAge: number; ageCheck: AgeCheck } | null;
}

export interface SafetyInput {
  audience: Audience;
  adult?: AdultSettings | undefined;
  region?: string | undefined;
  /** The adult kiosk's moderation; a public kiosk ignores it. */
  moderation?: Moderation | undefined;
}

/** Whether `region` lies in one of `allowed`: the same code, or a subdivision of an allowed country. */
export function regionAllowed(region: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => a === region || (!a.includes('-') && region.startsWith(`${a}-`)));
}

/**
 * The audience the kiosk runs as. `userAskedAdult`: config.json asked for adult but a policy file
 * manages these keys (so it was not used): staff are told why.
 */
export function resolveSafety(input: SafetyInput, userAskedAdult = false): SafetyPosture {
  const region = input.region ?? null;
  const publicPosture = (refusal: string | null): SafetyPosture => ({
    audience: 'public',
    requested: refusal ? 'adult' : 'public',
    moderation: 'strict',
    region,
    refusal,
    ageGate: null,
  });
  if (input.audience !== 'adult') {
    return publicPosture(
      userAskedAdult ? 'config.json asks for audience "adult", but an administrator\'s policy file manages this kiosk: only the policy file can make it adult. It runs as public (moderation strict).' : null,
    );
  }
  const adult = input.adult ?? adultSchema.parse({});
  if (!region) return publicPosture('Audience "adult" needs the venue\'s region (ISO 3166, e.g. "DE"); none is set, so the kiosk runs as public (moderation strict).');
  if (!regionAllowed(region, adult.allowedRegions)) {
    const where = adult.allowedRegions.length ? adult.allowedRegions.join(', ') : 'none';
    return publicPosture(`Audience "adult" is not allowed in region ${region} (adult.allowedRegions: ${where}), so the kiosk runs as public (moderation strict).`);
  }
  return {
    audience: 'adult',
    requested: 'adult',
    moderation: input.moderation ?? 'disabled',
    region,
    refusal: null,
    ageGate: { minimumAge: adult.minimumAge, ageCheck: adult.ageCheck },
  };
}

/** What the page is told: the audience it runs as, the age gate, the venue's notice and its QR code. */
export function publicSafety(config: { safety: SafetyPosture; privacy?: PrivacySettings | undefined }): PublicSafety {
  const url = config.privacy?.url ?? null;
  return {
    audience: config.safety.audience,
    ageGate: config.safety.ageGate ? { ...config.safety.ageGate } : null,
    privacy: { notice: config.privacy?.notice ? { ...config.privacy.notice } : null, url, qr: url ? qrDrawing(url) : null },
  };
}
