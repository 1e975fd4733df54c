/**
 * The staff panel's settings, without Electron: every config.json key as `EditableSettings`,
 * validated with the one config schema (config.ts) into a human message per field, written through a
 * small persistence interface (electron-store in the app, a JSON file in tests and the CLI).
 *
 * What applies without a restart: everything except `window.*` and `rtcEngine` (the window is created
 * with them at start). The kiosk reads the configuration at each session start, so a saved
 * change is used by the next call; the attract screen re-reads PublicConfig.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { dirname, extname, isAbsolute, join } from 'node:path';
import type { z } from 'zod';
import type { EditableSettings } from '../contract.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { MAX_BASE64_IMAGE_BYTES, MAX_LIVE_DURATION_S } from '../core/protocol.ts';
import { configFileSchema, envOverrides, keepUnknownKeys, resolveConfig, type ConfigEnv, type KioskConfig } from '../kiosk/config.ts';

/** Where the raw config file lives. `write` replaces the whole object. */
export interface SettingsPersistence {
  read(): Record<string, unknown>;
  write(next: Record<string, unknown>): Promise<void>;
}

/** Keys that only take effect after a restart (the window is built with them). */
export const RESTART_KEYS = ['window.mode', 'window.width', 'window.height', 'rtcEngine'] as const;
/** Keys kept in the file that the panel never shows or edits. */
/** Keys of config.json the settings form does not edit: kept as they are in the file on every save. */
// The privacy notice too: a save of the form must never drop it (what visitors are told would change).
const HIDDEN_KEYS = ['encryptedApiKey', 'staffPinHash', 'avatars', 'video', 'companion', 'metrics', 'prewarm', 'presence', 'schedule', 'mqtt', 'update', 'castSelection', 'privacy'] as const;
/** The audience keys the form may leave out: then the file's stay as they are. */
const KEPT_WHEN_ABSENT = ['audience', 'adult', 'region'] as const;

const LABELS: Record<string, string> = {
  'service.surface': 'Service surface',
  'service.baseUrl': 'Service URL',
  'service.gatewayUrl': 'Gateway URL',
  callMode: 'Call mode',
  allowModeChoice: 'Let visitors choose video or voice',
  'avatar.imagePath': 'Avatar image',
  'avatar.persona': 'Persona',
  'avatar.name': 'Avatar name',
  'avatar.voice': 'Voice',
  moderation: 'Moderation',
  audience: 'Audience',
  region: 'Region',
  'adult.allowedRegions': 'Regions where adult mode is allowed',
  'adult.minimumAge': 'Minimum age',
  'adult.ageCheck': 'Who checks the age',
  extraMotion: 'Extra motion',
  'window.mode': 'Window mode',
  'window.width': 'Window width',
  'window.height': 'Window height',
  rtcEngine: 'Audio/video engine',
  returnToAttractSeconds: 'Seconds before returning to the welcome screen',
  countdownWarningSeconds: 'Countdown warning (seconds before the end)',
  'idle.promptSeconds': 'Seconds of silence before "Are you still there?"',
  'idle.hangupSeconds': 'Seconds the prompt waits before hanging up',
  maxCallSeconds: 'Maximum call length (seconds)',
};

/** The editable view of a raw config file (defaults filled in, hidden keys dropped). */
export function editableFromFile(raw: Record<string, unknown>): EditableSettings {
  const visible = withoutHidden(raw);
  const parsed = configFileSchema.safeParse(visible);
  const cfg = parsed.success ? parsed.data : configFileSchema.parse({});
  const out: EditableSettings = {
    service: { surface: cfg.service.surface, ...(cfg.service.baseUrl ? { baseUrl: cfg.service.baseUrl } : {}), ...(cfg.service.gatewayUrl ? { gatewayUrl: cfg.service.gatewayUrl } : {}) },
    callMode: cfg.callMode,
    allowModeChoice: cfg.allowModeChoice,
    avatar: { imagePath: cfg.avatar.imagePath, ...(cfg.avatar.persona !== undefined ? { persona: cfg.avatar.persona } : {}), name: cfg.avatar.name, voice: cfg.avatar.voice },
    ...(cfg.moderation ? { moderation: cfg.moderation } : {}),
    ...(cfg.extraMotion !== undefined ? { extraMotion: cfg.extraMotion } : {}),
    audience: cfg.audience,
    ...(cfg.region ? { region: cfg.region } : {}),
    ...(cfg.adult ? { adult: { allowedRegions: [...cfg.adult.allowedRegions], minimumAge: cfg.adult.minimumAge, ageCheck: cfg.adult.ageCheck } } : {}),
    window: { ...cfg.window },
    rtcEngine: cfg.rtcEngine,
    returnToAttractSeconds: cfg.returnToAttractSeconds,
    countdownWarningSeconds: cfg.countdownWarningSeconds,
    idle: { ...cfg.idle },
    ...(cfg.maxCallSeconds !== undefined ? { maxCallSeconds: cfg.maxCallSeconds } : {}),
  };
  return out;
}

export type ValidatedSettings =
  | { ok: true; file: Record<string, unknown>; config: KioskConfig; restartRequired: boolean }
  | { ok: false; fieldErrors: Record<string, string> };

export interface ValidateOptions {
  env: ConfigEnv;
  appRoot: string;
  /** Check a local image file exists (injected in tests). Default: fs.existsSync. */
  fileExists?: (path: string) => boolean;
  /** The administrator's accepted policy settings (managed-config.ts): they win over the saved file. */
  policy?: Record<string, unknown>;
}

/**
 * Merge `next` into the current raw file (hidden keys kept), validate with the config schema and the
 * cross-field rules, and answer either the file to write plus the resolved config, or every field's
 * problem in words.
 */
export function validateSettings(current: Record<string, unknown>, next: EditableSettings, options: ValidateOptions): ValidatedSettings {
  const file: Record<string, unknown> = { ...next };
  // Empty optional text means "not set" (the form's empty box), not an invalid value.
  const service = { ...next.service } as Record<string, unknown>;
  for (const k of ['baseUrl', 'gatewayUrl']) if (typeof service[k] === 'string' && !(service[k] as string).trim()) delete service[k];
  file.service = service;
  const avatar = { ...next.avatar } as Record<string, unknown>;
  if (typeof avatar.persona === 'string' && !avatar.persona.trim()) delete avatar.persona;
  file.avatar = avatar;
  for (const key of HIDDEN_KEYS) if (current[key] !== undefined) file[key] = current[key];
  for (const key of KEPT_WHEN_ABSENT) if (next[key] === undefined && current[key] !== undefined) file[key] = current[key];
  if (typeof file.region === 'string' && !file.region.trim()) delete file.region;

  const fieldErrors: Record<string, string> = {};
  // The native engine runs the kiosk page with Node.js and without context isolation: only whoever can
  // write config.json or the policy may choose it, never the PIN-guarded panel.
  if (next.rtcEngine !== editableFromFile(current).rtcEngine) {
    fieldErrors.rtcEngine = 'The audio/video engine can only be changed in config.json or the policy file (the native engine gives the kiosk page Node.js).';
  }
  const parsed = configFileSchema.safeParse(file);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
      const field = [...issue.path.map(String), ...(keys.length ? [keys[0]!] : [])].join('.') || '(settings)';
      fieldErrors[field] ??= humanIssue(field, issue);
    }
  } else {
    const cfg = parsed.data;
    if (cfg.service.surface === 'gateway' && !cfg.service.gatewayUrl) fieldErrors['service.gatewayUrl'] = 'Gateway URL is required when the surface is "gateway".';
    const image = imageProblem(cfg.avatar.imagePath, options);
    if (image) fieldErrors['avatar.imagePath'] = image;
    if (cfg.countdownWarningSeconds >= (cfg.maxCallSeconds ?? MAX_LIVE_DURATION_S)) {
      fieldErrors.countdownWarningSeconds = `${LABELS.countdownWarningSeconds} must be shorter than the call (${cfg.maxCallSeconds ?? MAX_LIVE_DURATION_S} s).`;
    }
  }
  if (Object.keys(fieldErrors).length) return { ok: false, fieldErrors };

  let config: KioskConfig;
  try {
    config = resolveConfig(file, options.env, { appRoot: options.appRoot, ...(options.policy ? { policy: options.policy } : {}) });
  } catch (error) {
    const e = toAvatarError(error, 'invalid_config');
    const field = typeof e.details?.field === 'string' ? e.details.field : '(settings)';
    return { ok: false, fieldErrors: { [field]: e.message } };
  }
  const before = editableFromFile(current);
  const restartRequired = RESTART_KEYS.some((key) => String(get(before, key)) !== String(get(next, key)));
  return { ok: true, file, config, restartRequired };
}

/** Config keys the environment overrides (a saved value would not take effect). */
export function envManagedKeys(env: ConfigEnv): string[] {
  return envOverrides(env).map((o) => o.field);
}

/**
 * A picked image arrives as a data: URI; keep it as a file in the data folder rather than megabytes of
 * base64 in config.json. Returns the settings with `avatar.imagePath` pointing at the file.
 */
export function storePickedImage(next: EditableSettings, dataDir: string): EditableSettings {
  const match = /^data:image\/(png|jpeg|jpg|webp);base64,/i.exec(next.avatar.imagePath);
  if (!match) return next;
  const ext = match[1]!.toLowerCase() === 'jpeg' ? 'jpg' : match[1]!.toLowerCase();
  const bytes = Buffer.from(next.avatar.imagePath.slice(match[0].length), 'base64');
  if (bytes.byteLength === 0) throw new AvatarError('invalid_request', 'The picked image is empty.');
  if (bytes.byteLength >= MAX_BASE64_IMAGE_BYTES) throw new AvatarError('invalid_request', `The picked image must be under ${MAX_BASE64_IMAGE_BYTES / 2 ** 20} MB.`);
  const path = join(dataDir, `avatar-image.${ext}`);
  writeFileAtomic(path, bytes);
  return { ...next, avatar: { ...next.avatar, imagePath: path } };
}

/** A JSON file as the settings store (tests, CLI). Written atomically (temp file + rename). */
export function jsonFilePersistence(path: string): SettingsPersistence {
  return {
    read() {
      if (!existsSync(path)) return {};
      const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AvatarError('invalid_config', `${path} must hold a JSON object.`);
      return raw as Record<string, unknown>;
    },
    async write(next) {
      // A newer version's settings stay in the file (a rollback must not lose them on the first save).
      let current: Record<string, unknown> = {};
      try {
        current = this.read();
      } catch {
        // An unreadable file has nothing to keep.
      }
      writeFileAtomic(path, JSON.stringify(keepUnknownKeys(current, next), null, 2) + '\n');
    },
  };
}

/** Write a file so that a reader (or a crash) sees the old content or the new, never half of one. */
export function writeFileAtomic(path: string, data: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

// ---------------------------------------------------------------------------------------------------

function withoutHidden(raw: Record<string, unknown>): Record<string, unknown> {
  const out = { ...raw };
  for (const key of HIDDEN_KEYS) delete out[key];
  return out;
}

function get(obj: unknown, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

type Issue = z.core.$ZodIssue;

/** One sentence a person understands, naming the field by its label. */
export function humanIssue(field: string, issue: Issue): string {
  const label = LABELS[field] ?? field;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'int') return `${label} must be a whole number.`;
      if (issue.expected === 'number') return `${label} must be a number.`;
      if (issue.expected === 'boolean') return `${label} must be on or off.`;
      if (issue.expected === 'string') return `${label} must be text.`;
      return `${label} is missing or has the wrong type.`;
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) <= 1 ? `${label} cannot be empty.` : `${label} must be at least ${issue.minimum} characters.`;
      return `${label} must be at least ${issue.minimum}.`;
    case 'too_big':
      if (issue.origin === 'string') return `${label} must be at most ${issue.maximum} characters.`;
      return `${label} must be at most ${issue.maximum}.`;
    case 'invalid_format':
      return issue.format === 'url' ? `${label} must be an http:// or https:// address.` : `${label} has the wrong format.`;
    case 'invalid_value':
      return `${label} must be one of: ${issue.values.map(String).join(', ')}.`;
    case 'unrecognized_keys':
      return `${label} is not a setting this kiosk knows.`;
    default:
      return `${label}: ${issue.message}.`;
  }
}

function imageProblem(imagePath: string, options: ValidateOptions): string | null {
  if (/^data:image\/(png|jpeg|jpg|webp);base64,/i.test(imagePath)) return null;
  if (/^https?:\/\//i.test(imagePath)) {
    try {
      new URL(imagePath);
      return null;
    } catch {
      return 'Avatar image: the address is not a valid URL.';
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(imagePath) && !/^[a-z]:[\\/]/i.test(imagePath)) return 'Avatar image must be a file, an http(s) address or a data: URI.';
  if (!['.png', '.jpg', '.jpeg', '.webp'].includes(extname(imagePath).toLowerCase())) return 'Avatar image must be a PNG, JPEG or WEBP file.';
  const full = isAbsolute(imagePath) ? imagePath : join(options.appRoot, imagePath);
  const exists = options.fileExists ?? existsSync;
  return exists(full) ? null : `Avatar image: no file at ${full}.`;
}
