/**
 * The kiosk's configuration file: its schema (zod, with a default for every field), the environment
 * overrides, and the JSON Schema electron-store validates the file with. Electron-free, so it runs
 * under plain Node in tests; `store.ts` is the thin Electron adapter that reads the file.
 *
 * `resolveConfig(raw, env)` never returns a half-valid config: it returns the typed config or throws an
 * `AvatarError('invalid_config')` whose message names the offending field (e.g. `window.width`).
 * The API key is never part of the returned config: it lives in the environment (AVATAR_API_KEY) or as
 * safeStorage ciphertext (`encryptedApiKey`), and only main decrypts it.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { AvatarError } from '../core/errors.ts';
import { cleartextKeyProblem, isLoopbackHost } from '../core/surface.ts';
import { CALL_MODES, MAX_LIVE_DURATION_S, MODERATION_VALUES, type CallMode } from '../core/protocol.ts';
import { AVATAR_GENDERS, LANGUAGE_CODES, PREWARM_MODES, VIDEO_FITS, type AvatarGender, type Greeting, type LanguageCode } from '../contract.ts';
import { mqttSchema, scheduleSchema, updateSchema, WHOLE_BLOCKS } from './fleet-config.ts';
import { adultSchema, AUDIENCES, privacySchema, regionSchema, resolveSafety, SAFETY_KEYS, type SafetyPosture } from './safety-config.ts';

/** Relative to the app root (`app.getAppPath()`); the image is created by the resources helper. */
export const DEFAULT_AVATAR_IMAGE = 'resources/demo-avatar.png';
export const DEFAULT_PERSONA_FILE = 'resources/demo-persona.txt';
/** Used when resources/demo-persona.txt is missing too. */
export const FALLBACK_PERSONA =
  'You are Ava, a friendly digital receptionist at a public kiosk. Greet visitors warmly, keep answers short and clear, and help them find what they need.';

const httpUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
  .transform((u) => u.replace(/\/+$/, ''));

const serviceSchema = z
  .strictObject({
    /** direct: the service with our API key (kept in main); gateway: the integrator's gateway, no key. */
    surface: z.enum(['direct', 'gateway']).default('direct'),
    // The direct surface carries our key: http: only to this computer (core/surface.ts says why).
    baseUrl: httpUrl.refine((u) => cleartextKeyProblem(u) === null, { error: (issue) => cleartextKeyProblem(String(issue.input)) ?? 'must be an https URL' }).optional(),
    gatewayUrl: httpUrl.optional(),
    /** Gateway only, and from the policy file only: the integrator's per-kiosk client authentication
     *  (e.g. `{"X-Device-Token": "…"}`), never the service key. */
    gatewayHeaders: z.record(z.string().max(64), z.string().min(1).max(4096)).refine((h) => Object.keys(h).length <= 8, 'at most 8 headers').optional(),
  })
  .default({ surface: 'direct' });

const avatarSchema = z
  .strictObject({
    /** A local file (absolute, or relative to the app root), an http(s) URL or a data: URI. */
    imagePath: z.string().min(1).default(DEFAULT_AVATAR_IMAGE),
    /** `undefined` here means "the demo persona file"; resolveConfig fills it in. */
    persona: z.string().min(1).optional(),
    name: z.string().min(1).max(64).default('Ava'),
    voice: z.string().min(1).default('Tina'),
    /** How the visitor's language speaks of the avatar (grammatical gender); `neutral` when not said. */
    gender: z.enum(AVATAR_GENDERS).optional(),
  })
  .default({ imagePath: DEFAULT_AVATAR_IMAGE, name: 'Ava', voice: 'Tina', gender: 'female' });

const greetingText = z.string().min(1).max(500);
/** One text (the string form), or one per language: `{ "en": "Hello!", "de": "Hallo!" }`. */
const greetingSchema = z.union([
  greetingText,
  z
    .partialRecord(z.enum(LANGUAGE_CODES), greetingText)
    .refine((m) => Object.keys(m).length > 0, 'needs at least one language'),
]);

const windowSchema = z
  .strictObject({
    mode: z.enum(['kiosk', 'windowed', 'companion']).default('kiosk'),
    width: z.number().int().min(320).max(7680).default(1080),
    height: z.number().int().min(320).max(7680).default(1920),
  })
  .default({ mode: 'kiosk', width: 1080, height: 1920 });

/** Electron accelerator syntax: modifiers and one key joined by `+` (e.g. `CommandOrControl+Shift+Space`). */
const ACCELERATOR = /^(?:(?:Command|Cmd|Control|Ctrl|CommandOrControl|CmdOrCtrl|Alt|Option|AltGr|Shift|Super|Meta)\+)*(?:[A-Za-z0-9]|F(?:[1-9]|1[0-9]|2[0-4])|Space|Tab|Backspace|Delete|Insert|Return|Enter|Up|Down|Left|Right|Home|End|PageUp|PageDown|Escape|Esc|Plus|[-=;',./`\[\]\\])$/;
export const DEFAULT_COMPANION_SHORTCUT = 'CommandOrControl+Shift+Space';

/** One member of the cast (`avatars`); missing persona/voice/callMode fall back to the `avatar` block / `callMode`. */
const castMemberSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'must be 1-64 letters, digits, "-" or "_"').optional(),
  imagePath: z.string().min(1),
  name: z.string().min(1).max(64),
  persona: z.string().min(1).optional(),
  voice: z.string().min(1).optional(),
  callMode: z.enum(CALL_MODES).optional(),
  greeting: greetingSchema.optional(),
  gender: z.enum(AVATAR_GENDERS).optional(),
});

const companionSchema = z
  .strictObject({
    shortcut: z.string().regex(ACCELERATOR, 'must be an accelerator such as "CommandOrControl+Shift+Space"').default(DEFAULT_COMPANION_SHORTCUT),
    pushToTalk: z.boolean().default(false),
    /** The companion window's first size (later runs restore the size and position the user left it at). */
    width: z.number().int().min(360).max(3840).default(420),
    height: z.number().int().min(480).max(3840).default(640),
  })
  .default({ shortcut: DEFAULT_COMPANION_SHORTCUT, pushToTalk: false, width: 420, height: 640 });

const metricsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    host: z.string().min(1).max(255).default('127.0.0.1'),
    port: z.number().int().min(1).max(65535).default(9464),
    /** Bearer token for /metrics and /healthz; required when `host` is not a loopback address. */
    token: z.string().min(16, 'must be at least 16 characters').max(512).optional(),
  })
  .default({ enabled: false, host: '127.0.0.1', port: 9464 });
/** Spare (pre-warmed) sessions: see electron/kiosk/spare.ts and docs/fast-start.md. */
const prewarmSchema = z
  .strictObject({
    /** off | on-approach (someone in front of the camera; with no camera, while the attract screen shows) | always */
    mode: z.enum(PREWARM_MODES).default('on-approach'),
    /** An unused spare is closed (type 5, never initialised, never billed) after this long. */
    maxAgeSeconds: z.number().int().min(10).max(600).default(90),
    /** At most this many spares are created in any rolling hour. */
    maxPerHour: z.number().int().min(0).max(600).default(40),
    /** The renderer joins a spare's RTC channel receive-only as soon as it exists (nothing captured or
     *  published before the tap), so the tap does not carry a channel join. */
    prejoin: z.boolean().default(true),
  })
  .default({ mode: 'on-approach', maxAgeSeconds: 90, maxPerHour: 40, prejoin: true });

/** The RTC side of calls: see docs/network.md. */
const rtcSchema = z
  .strictObject({
    /** The RTC provider's cloud proxy for firewalled venues: off, UDP, or TCP (TLS 443). It must also be
     *  enabled for the service's RTC app id by the provider. */
    cloudProxy: z.enum(['off', 'udp', 'tcp']).default('off'),
  })
  .default({ cloudProxy: 'off' });

const presenceSchema = z
  .strictObject({
    /** The attract screen may use the camera (locally, nothing recorded) to notice visitors. */
    cameraEnabled: z.boolean().default(true),
  })
  .default({ cameraEnabled: true });

/** What the persona gets at session create for each language (the service has no language field). */
export const DEFAULT_LANGUAGE_INSTRUCTIONS: Record<LanguageCode, string> = {
  en: 'Always answer in English.',
  es: 'Always answer in Spanish.',
  fr: 'Always answer in French.',
  de: 'Always answer in German.',
  'zh-Hans': 'Always answer in Simplified Chinese (Mandarin).',
  ja: 'Always answer in Japanese.',
  ar: 'Always answer in Arabic.',
};

const languageSchema = z.enum(LANGUAGE_CODES);

/** Accessibility mode (docs/accessibility.md). */
const accessibilitySchema = z
  .strictObject({
    /** Start every visitor in accessibility mode (high contrast, large text, less motion, low reach). */
    default: z.boolean().default(false),
    /** Low-reach layout: every visitor control sits in this lower part of the screen (percent of its
     *  height, from the bottom). Set it from the screen's mounting height so the band stays within the
     *  reach range of a seated person (EN 301 549 / ADA: about 380 to 1220 mm above the floor). */
    reachBandPercent: z.number().int().min(20).max(100).default(50),
  })
  .default({ default: false, reachBandPercent: 50 });

export const configFileSchema = z.strictObject({
  service: serviceSchema,
  callMode: z.enum(CALL_MODES).default('video'),
  allowModeChoice: z.boolean().default(true),
  avatar: avatarSchema,
  /** An adult kiosk's moderation (default `disabled`); a public kiosk always sends `strict`. */
  moderation: z.enum(MODERATION_VALUES).optional(),
  /** Who the kiosk is for, its adult rules, its region, the venue's privacy notice (safety-config.ts). */
  audience: z.enum(AUDIENCES).default('public'),
  adult: adultSchema.optional(),
  region: regionSchema.optional(),
  privacy: privacySchema.optional(),
  extraMotion: z.boolean().optional(),
  window: windowSchema,
  rtcEngine: z.enum(['auto', 'agora-web', 'agora-native']).default('auto'),
  returnToAttractSeconds: z.number().int().min(1).max(600).default(15),
  countdownWarningSeconds: z.number().int().min(0).max(600).default(30),
  /** safeStorage ciphertext of the API key, base64. Never the key itself. */
  encryptedApiKey: z.base64().min(1).optional(),
  /** Seconds of silence (no voice, nobody seen) before "Are you still there?", then until the hang-up. */
  idle: z
    .strictObject({
      promptSeconds: z.number().int().min(10).max(600).default(45),
      hangupSeconds: z.number().int().min(5).max(120).default(15),
    })
    .default({ promptSeconds: 45, hangupSeconds: 15 }),
  /** The venue's maximum call length, below the service's live_duration cap (`MAX_LIVE_DURATION_S`). */
  maxCallSeconds: z.number().int().min(30).max(MAX_LIVE_DURATION_S - 1).optional(),
  /** scrypt hash of the staff PIN (`scrypt$N$r$p$salt$hash`, base64 parts). Never the PIN. */
  staffPinHash: z.string().min(1).max(512).optional(),
  avatars: z.array(castMemberSchema).min(1).max(12).optional(),
  video: z.strictObject({ fit: z.enum(VIDEO_FITS).optional() }).optional(),
  companion: companionSchema,
  metrics: metricsSchema,
  prewarm: prewarmSchema,
  presence: presenceSchema,
  rtc: rtcSchema,
  /** Fleet settings (kiosk/fleet-config.ts): opening hours, the operator's MQTT broker, safe updates. */
  schedule: scheduleSchema.optional(),
  mqtt: mqttSchema.optional(),
  update: updateSchema.optional(),
  /** Which cast members (ids) the attract screen offers, in this order (a remote `apply` sets it). */
  castSelection: z.array(z.string().min(1).max(64)).min(1).max(12).optional(),
  /** The languages a visitor may pick on the attract screen (shown in this order). */
  languages: z
    .array(languageSchema)
    .min(1)
    .refine((l) => new Set(l).size === l.length, 'must not list a language twice')
    .default([...LANGUAGE_CODES]),
  /** The language each visitor starts in (and the spare session is made for); one of `languages`. */
  defaultLanguage: languageSchema.default('en'),
  /** Appended to the persona for the visitor's language; a language not set here uses the default. */
  languageInstructions: z.partialRecord(languageSchema, z.string().min(1).max(1000)).optional(),
  accessibility: accessibilitySchema,
});

export type ConfigFile = z.input<typeof configFileSchema>;

/** The resolved configuration main works with (persona always filled in, paths absolute). */
export type KioskConfig = Omit<z.output<typeof configFileSchema>, 'avatar'> & {
  avatar: { imagePath: string; persona: string; name: string; voice: string; gender: AvatarGender };
  /** The cast: `avatars` resolved (ids, paths, fallbacks), or the `avatar` block as a cast of one. */
  cast: CastEntry[];
  /** What the kiosk runs as (audience, the moderation every create sends, why adult was refused). */
  safety: SafetyPosture;
};

/** A resolved cast member: everything a session needs. */
export interface CastEntry {
  id: string;
  name: string;
  imagePath: string;
  persona: string;
  voice: string;
  callMode: CallMode;
  greeting: Greeting | null;
  gender: AvatarGender;
}

/** The environment variables we read. `AVATAR_API_KEY` is returned separately, never put in config. */
export interface ConfigEnv {
  AVATAR_API_KEY?: string | undefined;
  AVATAR_BASE_URL?: string | undefined;
  AVATAR_GATEWAY_URL?: string | undefined;
  AVATAR_SURFACE?: string | undefined;
  KIOSK_WINDOW_MODE?: string | undefined;
}

/**
 * The API key the environment gives, the one reading of `AVATAR_API_KEY` for every host and the CLI: trimmed
 * (an env file's stray space or line end is not part of a key), and an empty or blank value is no key.
 */
export function apiKeyFromEnv(env: Pick<ConfigEnv, 'AVATAR_API_KEY'>): string | null {
  return env.AVATAR_API_KEY?.trim() || null;
}

export interface ResolveOptions {
  /** The administrator's policy layer (managed-config.ts): already checked block by block; its keys win over the file and the environment
   *  (a key present with the value undefined is a refused block: it locks the user's value out). */
  policy?: Record<string, unknown>;
  /** Relative paths (avatar image, persona file) resolve against this. Default: process.cwd(). */
  appRoot?: string;
  /** Read the persona file (injected in tests). Returns null when it cannot be read. */
  readText?: (path: string) => string | null;
}

/**
 * Validate the raw file content, apply environment overrides, fill defaults. Throws
 * `AvatarError('invalid_config')` naming the first bad field (`details.field`).
 */
export function resolveConfig(raw: unknown, env: ConfigEnv = {}, options: ResolveOptions = {}): KioskConfig {
  const appRoot = options.appRoot ?? process.cwd();
  const readText = options.readText ?? defaultReadText;
  const input = raw === undefined || raw === null ? {} : raw;
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new AvatarError('invalid_config', 'Invalid configuration at "(root)": the file must hold a JSON object.', { details: { field: '(root)' } });
  }
  // Settings this version does not know (written by a newer one, before a rollback) are left out here,
  // never fatal: callers report them (`unknownConfigKeys`) and keep them in the file.
  const user = applyEnv(withoutUnknownKeys(input as Record<string, unknown>), env);
  // Gateway headers authenticate this kiosk to the integrator's gateway: the administrator sets them,
  // never config.json (which the staff panel writes).
  if (isRecord(user.service)) delete user.service.gatewayHeaders;
  // config.json asked for adult where a policy file holds the audience: staff hear why it is not used.
  const policyHoldsAudience = options.policy !== undefined && SAFETY_KEYS.some((k) => Object.hasOwn(options.policy!, k));
  const userAskedAdult = policyHoldsAudience && user.audience === 'adult';
  // A block the policy sets whole (or locks, refused) takes nothing from the user's file.
  for (const block of WHOLE_BLOCKS) if (options.policy && Object.hasOwn(options.policy, block)) delete user[block];
  // Nor the audience keys: config.json must not lower the age or add a region to a policy's adult block.
  if (policyHoldsAudience) for (const key of SAFETY_KEYS) delete user[key];
  const merged = overlay(user, options.policy ?? {});
  const parsed = configFileSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue && issue.code === 'unrecognized_keys' ? issue.keys : [];
    const path = [...(issue?.path ?? []), ...(keys.length ? [keys[0]!] : [])];
    const field = path.length ? path.join('.') : '(root)';
    const fromEnv = envFieldSource(field, env);
    throw new AvatarError(
      'invalid_config',
      `Invalid configuration at "${field}"${fromEnv ? ` (from ${fromEnv})` : ''}: ${issue?.message ?? 'unexpected value'}.`,
      { details: { field } },
    );
  }
  const cfg = parsed.data;
  if (cfg.service.surface === 'gateway' && !cfg.service.gatewayUrl) {
    throw new AvatarError('invalid_config', 'Invalid configuration at "service.gatewayUrl": required when service.surface is "gateway".', {
      details: { field: 'service.gatewayUrl' },
    });
  }
  const imagePath = resolveImagePath(cfg.avatar.imagePath, appRoot);
  const persona = cfg.avatar.persona ?? readText(join(appRoot, DEFAULT_PERSONA_FILE))?.trim() ?? FALLBACK_PERSONA;
  const avatar = { ...cfg.avatar, imagePath, persona: persona || FALLBACK_PERSONA, gender: cfg.avatar.gender ?? 'neutral' };
  checkMetrics(cfg.metrics);
  if (!cfg.languages.includes(cfg.defaultLanguage)) {
    throw new AvatarError('invalid_config', `Invalid configuration at "defaultLanguage": "${cfg.defaultLanguage}" is not one of languages (${cfg.languages.join(', ')}).`, {
      details: { field: 'defaultLanguage' },
    });
  }
  const safety = resolveSafety(cfg, userAskedAdult && cfg.audience !== 'adult');
  return { ...cfg, avatar, cast: selectCast(resolveCast(cfg, avatar, appRoot), cfg.castSelection), safety };
}

/** The configuration with nothing configured (what main falls back to when the file is invalid). */
export function defaultConfig(env: ConfigEnv = {}, options: ResolveOptions = {}): KioskConfig {
  try {
    return resolveConfig({}, env, options);
  } catch {
    // A bad environment override must not stop the safe fallback either.
    try {
      return resolveConfig({}, {}, options);
    } catch {
      // Nor a policy whose settings conflict: the safe defaults then do without it.
      return resolveConfig({}, {}, { ...options, policy: {} });
    }
  }
}

/**
 * The dotted keys of a config file that this version does not know (a newer version wrote them, or a
 * typo), e.g. `window.hdr`, `avatars.0.mood`. They are not fatal: resolveConfig leaves them out, the kiosk
 * reports them to staff, and writes keep them in the file (so rolling forward again finds them).
 */
export function unknownConfigKeys(raw: unknown): string[] {
  const unknown: string[] = [];
  if (isRecord(raw)) splitUnknown(raw, configInputSchema(), '', unknown);
  return unknown;
}

/** A copy of the file without the keys this version does not know. */
export function withoutUnknownKeys(raw: Record<string, unknown>): Record<string, unknown> {
  return splitUnknown(structuredClone(raw), configInputSchema(), '', []) as Record<string, unknown>;
}

/** `next` (what this version writes) with the unknown keys of `current` (the file as it was) put back. */
export function keepUnknownKeys(current: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(next);
  for (const key of unknownConfigKeys(current)) {
    const parts = key.split('.');
    let from: unknown = current;
    let to: Record<string, unknown> = out;
    for (const [i, part] of parts.entries()) {
      from = (from as Record<string, unknown>)[part];
      if (i === parts.length - 1) to[part] ??= structuredClone(from);
      else {
        const child = to[part];
        // The known parent was removed or replaced by a list: its unknown children go with it.
        if (typeof child !== 'object' || child === null) break;
        to = child as Record<string, unknown>;
      }
    }
  }
  return out;
}

let inputSchema: Record<string, unknown> | null = null;
function configInputSchema(): Record<string, unknown> {
  inputSchema ??= z.toJSONSchema(configFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return inputSchema;
}

/** Walks `value` along the JSON Schema: a key a closed object does not list is collected and removed. */
function splitUnknown(value: unknown, schema: unknown, path: string, unknown: string[]): unknown {
  if (!isRecord(schema)) return value;
  if (Array.isArray(value)) return isRecord(schema.items) ? value.map((v, i) => splitUnknown(v, schema.items, `${path}${i}.`, unknown)) : value;
  if (!isRecord(value) || schema.additionalProperties !== false || !isRecord(schema.properties)) return value;
  const properties = schema.properties;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (Object.hasOwn(properties, k)) out[k] = splitUnknown(v, properties[k], `${path}${k}.`, unknown);
    else unknown.push(`${path}${k}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------

/** The settings the environment overrides, one row each: the variable and the dotted key it sets. The one
 *  reading of these variables (the config, where a value came from, which keys the staff panel locks). */
export const ENV_OVERRIDES = [
  { variable: 'AVATAR_BASE_URL', field: 'service.baseUrl' },
  { variable: 'AVATAR_GATEWAY_URL', field: 'service.gatewayUrl' },
  { variable: 'AVATAR_SURFACE', field: 'service.surface' },
  { variable: 'KIOSK_WINDOW_MODE', field: 'window.mode' },
] as const satisfies ReadonlyArray<{ variable: keyof ConfigEnv; field: string }>;

/** The overrides this environment sets (blank counts as unset), each with its trimmed value. */
export function envOverrides(env: ConfigEnv): Array<{ variable: string; field: string; value: string }> {
  return ENV_OVERRIDES.flatMap(({ variable, field }) => {
    const raw = env[variable];
    return nonEmpty(raw) ? [{ variable, field, value: raw!.trim() }] : [];
  });
}

function applyEnv(cfg: Record<string, unknown>, env: ConfigEnv): Record<string, unknown> {
  const overrides = envOverrides(env);
  const service = isRecord(cfg.service) ? { ...cfg.service } : {};
  for (const o of overrides) if (o.field.startsWith('service.')) service[o.field.slice('service.'.length)] = o.value;
  if (Object.keys(service).length || cfg.service !== undefined) cfg.service = service;
  const mode = overrides.find((o) => o.field === 'window.mode');
  if (mode) {
    const win = isRecord(cfg.window) ? { ...cfg.window } : {};
    win.mode = mode.value;
    cfg.window = win;
  }
  return cfg;
}

/** The environment variable that set a dotted config key (null when the file did). */
export function envFieldSource(field: string, env: ConfigEnv): string | null {
  return envOverrides(env).find((o) => o.field === field)?.variable ?? null;
}

/** Deep-merge `top` over `base`: objects merge key by key, anything else (arrays too) replaces. */
export function overlay(base: Record<string, unknown>, top: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(top)) {
    out[k] = isRecord(v) && isRecord(out[k]) ? overlay(out[k] as Record<string, unknown>, v) : structuredClone(v);
  }
  return out;
}

/** Loopback hosts may serve metrics without a token; anything else (0.0.0.0, a LAN address) may not. */
export { isLoopbackHost };

function checkMetrics(metrics: z.output<typeof metricsSchema>): void {
  if (metrics.enabled && !isLoopbackHost(metrics.host) && !metrics.token) {
    throw new AvatarError('invalid_config', `Invalid configuration at "metrics.token": required when metrics.host ("${metrics.host}") is not a loopback address.`, {
      details: { field: 'metrics.token' },
    });
  }
}

function resolveCast(cfg: z.output<typeof configFileSchema>, avatar: KioskConfig['avatar'], appRoot: string): CastEntry[] {
  if (!cfg.avatars) return [{ id: 'default', name: avatar.name, imagePath: avatar.imagePath, persona: avatar.persona, voice: avatar.voice, callMode: cfg.callMode, greeting: null, gender: avatar.gender }];
  const explicit = new Set<string>();
  cfg.avatars.forEach((m, i) => {
    if (m.id === undefined) return;
    if (explicit.has(m.id)) {
      throw new AvatarError('invalid_config', `Invalid configuration at "avatars.${i}.id": "${m.id}" is used by two avatars.`, { details: { field: `avatars.${i}.id` } });
    }
    explicit.add(m.id);
  });
  const seen = new Set<string>(explicit);
  return cfg.avatars.map((m, i) => {
    let id = m.id;
    if (id === undefined) {
      // From the name ("Dr. Kim" → "dr-kim"); numbered when taken.
      const slug = m.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'avatar';
      id = seen.has(slug) ? `${slug}-${i + 1}` : slug;
      seen.add(id);
    }
    return {
      id,
      name: m.name,
      imagePath: resolveImagePath(m.imagePath, appRoot),
      persona: m.persona ?? avatar.persona,
      voice: m.voice ?? avatar.voice,
      callMode: m.callMode ?? cfg.callMode,
      greeting: m.greeting ?? null,
      gender: m.gender ?? 'neutral',
    };
  });
}

/** The members named by `castSelection`, in its order (all of them when it is not set). */
function selectCast(cast: CastEntry[], selection: string[] | undefined): CastEntry[] {
  if (!selection) return cast;
  return selection.map((id, i) => {
    const member = cast.find((m) => m.id === id);
    if (!member) {
      throw new AvatarError('invalid_config', `Invalid configuration at "castSelection.${i}": there is no avatar "${id}" in the cast (${cast.map((m) => m.id).join(', ')}).`, {
        details: { field: `castSelection.${i}` },
      });
    }
    return member;
  });
}

/** The persona a session is created with in `language`: the member's persona, then the language's instruction. */
export function personaFor(config: Pick<KioskConfig, 'languageInstructions'>, persona: string, language: LanguageCode): string {
  const instruction = config.languageInstructions?.[language] ?? DEFAULT_LANGUAGE_INSTRUCTIONS[language];
  return `${persona.trimEnd()}\n\n${instruction}`;
}

function resolveImagePath(p: string, appRoot: string): string {
  if (/^(https?:|data:)/i.test(p) || isAbsolute(p)) return p;
  return join(appRoot, p);
}

function defaultReadText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function nonEmpty(v: string | undefined): boolean {
  return typeof v === 'string' && v.trim().length > 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
