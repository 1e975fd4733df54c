/**
 * The fleet's settings in config.json and the policy file: opening hours (`schedule`), the operator's MQTT
 * broker (`mqtt`) and safe updates (`update`). Only their schemas live here, beside config.ts, so the
 * config file stays one schema; the behaviour is in electron/fleet/. Electron-free.
 */
import { z } from 'zod';
import { isLoopbackHost } from '../core/surface.ts';

/** Blocks an administrator's policy sets as a whole: the user's file adds nothing to them (a schedule's
 *  extra weekday, a broker's extra login would half override what the administrator set). */
export const WHOLE_BLOCKS = ['schedule', 'mqtt', 'update'] as const;

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** "09:00-18:00"; the end may be 24:00 (open until midnight). */
const RANGE = /^([01]\d|2[0-3]):([0-5]\d)-(([01]\d|2[0-3]):([0-5]\d)|24:00)$/;

export function rangeMinutes(range: string): [number, number] | null {
  const m = RANGE.exec(range);
  if (!m) return null;
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = m[3] === '24:00' ? 24 * 60 : Number(m[4]) * 60 + Number(m[5]);
  return start < end ? [start, end] : null;
}

const openingRange = z.string().refine((r) => rangeMinutes(r) !== null, {
  error: (issue) => `"${String(issue.input)}" is not an opening range such as "09:00-18:00" (24-hour clock, start before end, 24:00 for midnight)`,
});

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const isoDate = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, 'must be a date such as "2026-12-25"');

export const scheduleSchema = z.strictObject({
  /** IANA time zone of the venue, e.g. "Europe/Berlin". */
  timeZone: z.string().min(1).max(64).refine(isTimeZone, { error: (issue) => `"${String(issue.input)}" is not a known time zone (use an IANA name such as "Europe/Berlin")` }),
  /** Opening ranges per weekday; a day left out is closed all day. */
  weekly: z.strictObject(Object.fromEntries(WEEKDAYS.map((d) => [d, z.array(openingRange).max(8).optional()])) as Record<Weekday, z.ZodOptional<z.ZodArray<typeof openingRange>>>),
  /** Local dates the venue stays closed (holidays). */
  closedDates: z.array(isoDate).max(366).optional(),
});
export type Schedule = z.output<typeof scheduleSchema>;

/** A topic level: no MQTT wildcards, separators or control characters. */
const topicPart = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, ".", "_" or "-"');
/** A kiosk's or group's level: levels starting with "_" are the fleet's own (`_fleet`, `_group`). */
const ownTopicPart = topicPart.refine((v) => !v.startsWith('_'), 'must not start with "_" (topic levels starting with "_" are reserved for the fleet: _fleet, _group)');

export function brokerUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be a broker URL such as "mqtts://broker.example.com:8883"';
  }
  const secure = parsed.protocol === 'mqtts:' || parsed.protocol === 'wss:';
  const plain = parsed.protocol === 'mqtt:' || parsed.protocol === 'ws:';
  if (!secure && !plain) return `must start with mqtts:// (got ${parsed.protocol}//)`;
  if (parsed.username || parsed.password) return 'must not hold a user name or password (use mqtt.username and mqtt.password)';
  if (plain && !isLoopbackHost(parsed.hostname)) {
    return `must start with mqtts:// (got ${parsed.protocol}//${parsed.host}): the password and the kiosk's events would cross the network unencrypted; plain mqtt:// is only for a broker on this computer`;
  }
  return null;
}

export const mqttSchema = z
  .strictObject({
    /** mqtts://host:8883 (mqtt:// only to a broker on this computer). */
    url: z.string().min(1).max(2048).refine((u) => brokerUrlProblem(u) === null, { error: (issue) => brokerUrlProblem(String(issue.input)) ?? 'invalid broker URL' }),
    /** This kiosk's name in the topics; default: the computer's host name. */
    kioskId: ownTopicPart.optional(),
    /** The operator's group for this kiosk (commands to `<prefix>/_group/<group>/cmd` reach it). */
    group: ownTopicPart.optional(),
    /** Default: the kiosk id. */
    clientId: z.string().min(1).max(128).optional(),
    username: z.string().min(1).max(256).optional(),
    password: z.string().min(1).max(1024).optional(),
    /** Client certificate, its key and the broker's CA, as files (PEM). */
    certFile: z.string().min(1).optional(),
    keyFile: z.string().min(1).optional(),
    caFile: z.string().min(1).optional(),
    topicPrefix: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}(\/[A-Za-z0-9_.-]{1,64}){0,3}$/, 'must be 1-4 levels of letters, digits, ".", "_" or "-" joined by "/"')
      .default('avatar-kiosk'),
    /** Events kept on disk while the broker is away; the oldest go first when full. */
    queueLimit: z.number().int().min(10).max(100_000).default(5000),
  })
  .refine((m) => !m.password || m.username, { error: 'mqtt.password needs mqtt.username', path: ['username'] })
  .refine((m) => Boolean(m.certFile) === Boolean(m.keyFile), { error: 'mqtt.certFile and mqtt.keyFile go together', path: ['keyFile'] });
export type MqttSettings = z.output<typeof mqttSchema>;

export const updateSchema = z.strictObject({
  /** The generic feed's folder URL (latest.yml and the installers). No URL: no updates. */
  url: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .refine((u) => u.startsWith('https:') || isLoopbackHost(new URL(u).hostname), 'must start with https:// (http:// only to this computer): an installer fetched in clear could be swapped on the way')
    .optional(),
  channel: z.string().regex(/^[a-z0-9-]{1,32}$/, 'must be lower-case letters, digits or "-"').default('latest'),
  /** The fleet's Ed25519 public keys (base64 SPKI, `cli update-keygen` prints one): the feed's channel files must
   *  be signed by one of them, or nothing is installed. No key: updates stay off. Two during a key change. */
  publicKeys: z
    .array(z.string().regex(/^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$/, 'must be an Ed25519 public key as `update-keygen` prints it ("MCowBQYDK2VwAyEA…", 60 characters)'))
    .min(1)
    .max(4)
    .optional(),
  /** Stay on (or go back to) exactly this version: the policy's rollback. */
  pinVersion: z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 'must be a version such as "1.4.2"').optional(),
  /** With opening hours set, installs wait for closing time unless the kiosk was idle this long. */
  idleMinutes: z.number().int().min(5).max(1440).default(30),
  checkEveryMinutes: z.number().int().min(15).max(1440).default(240),
});
export type UpdateSettings = z.output<typeof updateSchema>;
