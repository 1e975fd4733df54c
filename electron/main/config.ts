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
import { CALL_MODES, MODERATION_VALUES } from '../core/protocol.ts';
import { PREWARM_MODES } from '../contract.ts';

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
    baseUrl: httpUrl.optional(),
    gatewayUrl: httpUrl.optional(),
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
  })
  .default({ imagePath: DEFAULT_AVATAR_IMAGE, name: 'Ava', voice: 'Tina' });

const windowSchema = z
  .strictObject({
    mode: z.enum(['kiosk', 'windowed']).default('kiosk'),
    width: z.number().int().min(320).max(7680).default(1080),
    height: z.number().int().min(320).max(7680).default(1920),
  })
  .default({ mode: 'kiosk', width: 1080, height: 1920 });

// --- fast start (issue 7) ---
/** Spare (pre-warmed) sessions: see electron/main/spare.ts and README "Pre-warmed sessions". */
const prewarmSchema = z
  .strictObject({
    /** off | on-approach (someone in front of the camera; with no camera, while the attract screen shows) | always */
    mode: z.enum(PREWARM_MODES).default('on-approach'),
    /** An unused spare is closed (type 5, never initialised, never billed) after this long. */
    maxAgeSeconds: z.number().int().min(10).max(600).default(90),
    /** At most this many spares are created in any rolling hour. */
    maxPerHour: z.number().int().min(0).max(600).default(40),
  })
  .default({ mode: 'on-approach', maxAgeSeconds: 90, maxPerHour: 40 });

const presenceSchema = z
  .strictObject({
    /** The attract screen may use the camera (locally, nothing recorded) to notice visitors. */
    cameraEnabled: z.boolean().default(true),
  })
  .default({ cameraEnabled: true });

export const configFileSchema = z.strictObject({
  service: serviceSchema,
  callMode: z.enum(CALL_MODES).default('video'),
  allowModeChoice: z.boolean().default(true),
  avatar: avatarSchema,
  moderation: z.enum(MODERATION_VALUES).optional(),
  extraMotion: z.boolean().optional(),
  window: windowSchema,
  rtcEngine: z.enum(['auto', 'agora-web', 'agora-native']).default('auto'),
  returnToAttractSeconds: z.number().int().min(1).max(600).default(15),
  countdownWarningSeconds: z.number().int().min(0).max(600).default(30),
  /** safeStorage ciphertext of the API key, base64. Never the key itself. */
  encryptedApiKey: z.base64().min(1).optional(),
  // --- fast start (issue 7) ---
  prewarm: prewarmSchema,
  presence: presenceSchema,
});

export type ConfigFile = z.input<typeof configFileSchema>;

/** The resolved configuration main works with (persona always filled in, paths absolute). */
export type KioskConfig = Omit<z.output<typeof configFileSchema>, 'avatar'> & {
  avatar: { imagePath: string; persona: string; name: string; voice: string };
};

/** The environment variables we read. `AVATAR_API_KEY` is returned separately, never put in config. */
export interface ConfigEnv {
  AVATAR_API_KEY?: string | undefined;
  AVATAR_BASE_URL?: string | undefined;
  AVATAR_GATEWAY_URL?: string | undefined;
  AVATAR_SURFACE?: string | undefined;
  KIOSK_WINDOW_MODE?: string | undefined;
}

export interface ResolveOptions {
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
  const merged = applyEnv(structuredClone(input) as Record<string, unknown>, env);
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
  return { ...cfg, avatar: { ...cfg.avatar, imagePath, persona: persona || FALLBACK_PERSONA } };
}

/** The configuration with nothing configured (what main falls back to when the file is invalid). */
export function defaultConfig(env: ConfigEnv = {}, options: ResolveOptions = {}): KioskConfig {
  try {
    return resolveConfig({}, env, options);
  } catch {
    // A bad environment override must not stop the safe fallback either.
    return resolveConfig({}, {}, options);
  }
}

/**
 * The JSON Schema electron-store (conf, ajv draft 2020-12) validates the file with. conf wants the
 * `properties` map as `schema`; defaults stay in zod (conf must not write them into the file).
 */
export function configJsonSchema(): { properties: Record<string, unknown>; rootSchema: Record<string, unknown> } {
  const full = z.toJSONSchema(configFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const properties = stripDefaults(full.properties) as Record<string, unknown>;
  return { properties, rootSchema: { additionalProperties: false } };
}

// ---------------------------------------------------------------------------------------------------

function applyEnv(cfg: Record<string, unknown>, env: ConfigEnv): Record<string, unknown> {
  const service = isRecord(cfg.service) ? { ...cfg.service } : {};
  if (nonEmpty(env.AVATAR_BASE_URL)) service.baseUrl = env.AVATAR_BASE_URL!.trim();
  if (nonEmpty(env.AVATAR_GATEWAY_URL)) service.gatewayUrl = env.AVATAR_GATEWAY_URL!.trim();
  if (nonEmpty(env.AVATAR_SURFACE)) service.surface = env.AVATAR_SURFACE!.trim();
  if (Object.keys(service).length || cfg.service !== undefined) cfg.service = service;
  if (nonEmpty(env.KIOSK_WINDOW_MODE)) {
    const win = isRecord(cfg.window) ? { ...cfg.window } : {};
    win.mode = env.KIOSK_WINDOW_MODE!.trim();
    cfg.window = win;
  }
  return cfg;
}

function envFieldSource(field: string, env: ConfigEnv): string | null {
  if (field === 'service.baseUrl' && nonEmpty(env.AVATAR_BASE_URL)) return 'AVATAR_BASE_URL';
  if (field === 'service.gatewayUrl' && nonEmpty(env.AVATAR_GATEWAY_URL)) return 'AVATAR_GATEWAY_URL';
  if (field === 'service.surface' && nonEmpty(env.AVATAR_SURFACE)) return 'AVATAR_SURFACE';
  if (field === 'window.mode' && nonEmpty(env.KIOSK_WINDOW_MODE)) return 'KIOSK_WINDOW_MODE';
  return null;
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

function stripDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDefaults);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'default' || k === '$schema') continue;
    // ajv-formats knows no "base64" format (ajv strict mode would refuse the schema); the pattern stays.
    if (k === 'format' && v === 'base64') continue;
    out[k] = stripDefaults(v);
  }
  return out;
}

function nonEmpty(v: string | undefined): boolean {
  return typeof v === 'string' && v.trim().length > 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
