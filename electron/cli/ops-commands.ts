/**
 * Operator commands, for installers and staff at a terminal:
 *   doctor     the staff panel's diagnostics: config valid, key accepted, service reachable (a session
 *              created and closed before conn_init: nothing billed). Exit 0 all ok, 1 a check failed,
 *              2 bad usage or configuration.
 *   ledger     totals (today / 7 days / month) or CSV from the credit ledger.
 *   pin-hash   the scrypt hash of a staff PIN, for `staffPinHash` in config.json.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { ServiceClient } from '../core/rest-client.ts';
import { parseServiceTarget } from '../core/surface.ts';
import { dataDirFromEnv, userConfigRoot } from '../core/user-folders.ts';
import { startEmulator, type EmulatorHandle } from '../emulator/index.ts';
import { apiKeyFromEnv, defaultConfig, resolveConfig, type KioskConfig } from '../kiosk/config.ts';
import { runDoctor } from '../operations/doctor.ts';
import { LEDGER_DIR, addSession, createLedger, readLedgerFile, totalsOf, toCsv, type LedgerRecord, recordTime } from '../operations/ledger.ts';
import { checkNewPin, hashPin } from '../operations/staff-pin.ts';
import { RESOURCES_DIR } from './defaults.ts';
import { EXIT_FAILED, EXIT_USAGE, type CliIo } from './probe.ts';
import { KEY_SOURCES } from './target.ts';

const APP_ROOT = dirname(RESOURCES_DIR);

/** The app's user-data folder candidates: packaged ("Avatar Kiosk") first, then `npm start` ("avatar-kiosk"). */
export function userDataCandidates(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string[] {
  const base = userConfigRoot(env, platform, homedir());
  return [join(base, 'Avatar Kiosk'), join(base, 'avatar-kiosk')];
}

/** The kiosk's data folder: AVATAR_KIOSK_DATA when set (as the browser mode and the app read it), else the app's. */
export function defaultUserData(env: Record<string, string | undefined>): string {
  const chosen = dataDirFromEnv(env);
  if (chosen) return chosen;
  const candidates = userDataCandidates(env);
  return candidates.find((d) => existsSync(d)) ?? candidates[0]!;
}

/** Printed by `cli doctor`: where the video-network check runs. */
export const VIDEO_NETWORK_CHECK_LINE = 'The video-network check (join time, connection, cloud proxy; nothing charged) runs on the kiosk screen: Staff → Diagnostics → Check the video network.';

export interface DoctorCommandOptions {
  configPath?: string | undefined;
  baseUrl?: string | undefined;
  gatewayUrl?: string | undefined;
  apiKey?: string | undefined;
  json: boolean;
}

export async function runDoctorCommand(options: DoctorCommandOptions, io: CliIo): Promise<number> {
  const configPath = options.configPath ?? join(defaultUserData(io.env), 'config.json');
  let config: KioskConfig;
  let configError: AvatarError | null = null;
  let raw: Record<string, unknown> = {};
  if (existsSync(configPath)) {
    try {
      raw = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
      config = resolveConfig(raw, io.env, { appRoot: APP_ROOT });
    } catch (error) {
      configError = new AvatarError('invalid_config', `${configPath}: ${toAvatarError(error, 'invalid_config').message}`);
      config = defaultConfig(io.env, { appRoot: APP_ROOT });
    }
  } else if (options.configPath) {
    throw new AvatarError('invalid_config', `No configuration file at ${configPath}.`);
  } else {
    config = defaultConfig(io.env, { appRoot: APP_ROOT });
  }

  const apiKey = options.apiKey ?? apiKeyFromEnv(io.env) ?? undefined;
  let emulator: EmulatorHandle | null = null;
  let client: ServiceClient | null = null;
  let clientError: AvatarError | null = null;
  let mode: 'demo' | 'direct' | 'gateway';
  try {
    const gatewayUrl = options.gatewayUrl ?? (config.service.surface === 'gateway' ? config.service.gatewayUrl : undefined);
    const baseUrl = options.baseUrl ?? config.service.baseUrl;
    if (options.baseUrl && options.gatewayUrl) throw new AvatarError('invalid_request', 'Give either --base-url or --gateway-url, not both.');
    if (gatewayUrl && !options.baseUrl) {
      mode = 'gateway';
      client = new ServiceClient({ target: parseServiceTarget({ surface: 'gateway', gatewayUrl }), logger: io.logger });
    } else if (apiKey) {
      mode = 'direct';
      if (!baseUrl) throw new AvatarError('invalid_config', 'An API key is set but no service URL: set service.baseUrl or pass --base-url.');
      client = new ServiceClient({ target: parseServiceTarget({ surface: 'direct', baseUrl, apiKey }), logger: io.logger });
    } else if (raw.encryptedApiKey !== undefined || options.baseUrl) {
      // The stored key is safeStorage ciphertext only the app can open: do not silently test the emulator instead.
      throw new AvatarError('invalid_config', `The direct surface needs the API key here: ${KEY_SOURCES} (the key stored by the app is encrypted for the app only).`);
    } else {
      mode = 'demo';
      emulator = await startEmulator({ host: '127.0.0.1', port: 0, logger: io.logger });
      client = new ServiceClient({ target: parseServiceTarget({ surface: 'direct', baseUrl: emulator.baseUrl, apiKey: emulator.apiKey }), logger: io.logger });
    }
  } catch (error) {
    const e = toAvatarError(error, 'invalid_config');
    if (e.code === 'invalid_request' || e.code === 'invalid_config') throw e;
    clientError = e;
    mode = 'direct';
  }

  try {
    const report = await runDoctor({ mode, config, configError, client, clientError, logger: io.logger });
    const code = configError ? EXIT_USAGE : report.ok ? 0 : EXIT_FAILED;
    if (options.json) {
      io.stdout(JSON.stringify({ ok: report.ok, mode, config_path: existsSync(configPath) ? configPath : null, checks: report.checks, probe: report.probe }) + '\n');
    } else {
      io.stdout(`Avatar Kiosk doctor (${mode === 'demo' ? 'demo mode: the built-in emulator' : mode}; config ${existsSync(configPath) ? configPath : 'not found, defaults'})\n`);
      for (const c of report.checks) io.stdout(`  ${c.ok === true ? 'ok  ' : c.ok === false ? 'FAIL' : '--  '} ${c.id.padEnd(10)} ${c.message}\n`);
      io.stdout(report.ok ? 'All checks passed.\n' : 'Some checks failed.\n');
      // Joining the RTC network needs the kiosk's own engine (a browser or the native SDK), not this CLI.
      io.stdout(`${VIDEO_NETWORK_CHECK_LINE}\n`);
    }
    return code;
  } finally {
    await emulator?.close();
  }
}

export interface LedgerCommandOptions {
  since?: string | undefined;
  csv: boolean;
  file?: string | undefined;
  json: boolean;
  /** For tests: "now". */
  nowMs?: number;
}

export function parseSince(since: string | undefined): number | undefined {
  if (since === undefined) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(since);
  const ms = m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime() : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).getDate() !== Number(m[3])) throw new AvatarError('invalid_request', `--since must be a date as YYYY-MM-DD (got "${since}").`);
  return ms;
}

export async function runLedgerCommand(options: LedgerCommandOptions, io: CliIo): Promise<number> {
  const sinceMs = parseSince(options.since);
  const nowMs = options.nowMs ?? Date.now();
  let records: LedgerRecord[];
  let skipped: number;
  let source: string;
  if (options.file) {
    if (existsSync(options.file) && statSync(options.file).isDirectory()) {
      ({ records, skipped } = createLedger({ dir: options.file }).read());
    } else {
      ({ records, skipped } = readLedgerFile(options.file));
    }
    source = options.file;
  } else {
    const dir = join(defaultUserData(io.env), LEDGER_DIR);
    if (!existsSync(dir)) throw new AvatarError('invalid_request', `No ledger folder at ${dir}; pass --file PATH.`);
    ({ records, skipped } = createLedger({ dir }).read());
    source = dir;
  }
  if (skipped) io.stderr(`note: skipped ${skipped} unreadable line(s) in ${source} (a torn last line after a crash is expected)\n`);
  const selected = sinceMs === undefined ? records : records.filter((r) => recordTime(r) >= sinceMs);
  if (options.csv) {
    io.stdout(toCsv(selected));
    return 0;
  }
  const totals = totalsOf(records, nowMs);
  const sinceRow = sinceMs === undefined ? null : sumAll(selected);
  if (options.json) {
    io.stdout(JSON.stringify({ today: totals.today, last7Days: totals.last7Days, month: totals.month, ...(sinceRow ? { since: { date: options.since, ...sinceRow } } : {}) }) + '\n');
    return 0;
  }
  const row = (label: string, t: { sessions: number; credits: number; billedSeconds: number; unknownCredits: number; demoSessions: number }) =>
    `  ${label.padEnd(18)} ${String(t.sessions).padStart(8)} ${String(t.credits).padStart(9)} ${String(t.billedSeconds).padStart(8)} ${String(t.demoSessions).padStart(10)}${t.unknownCredits ? `   (+${t.unknownCredits} with unknown cost)` : ''}\n`;
  io.stdout(`Credit ledger (${source})\n  ${''.padEnd(18)} ${'sessions'.padStart(8)} ${'credits'.padStart(9)} ${'billed s'.padStart(8)} ${'demo calls'.padStart(10)}\n`);
  io.stdout(row('today', totals.today) + row('last 7 days', totals.last7Days) + row('this month', totals.month));
  if (sinceRow) io.stdout(row(`since ${options.since}`, sinceRow));
  const demo = (sinceRow ?? totals.month).demoSessions;
  if (demo) io.stdout('  Demo calls ran on the built-in emulator: nobody paid for them, so they are not in the sessions, credits or billed seconds.\n');
  return 0;
}

function sumAll(records: LedgerRecord[]) {
  const out = { sessions: 0, credits: 0, billedSeconds: 0, unknownCredits: 0, demoSessions: 0 };
  for (const r of records) if (r.kind === 'session') addSession(out, r);
  return out;
}

/** The PIN from standard input (or, with a warning, the command line): it must not sit in `ps` or the
 *  shell history, where anyone who reads them could open the staff panel. */
export async function runPinHashCommand(pin: string | undefined, io: CliIo, readStdin: () => Promise<string>): Promise<number> {
  if (pin !== undefined) io.stderr('cli: warning: a PIN on the command line shows in the process list and shell history; pipe it on standard input instead.\n');
  const given = (pin ?? (await readStdin())).trim();
  if (!given) throw new AvatarError('invalid_request', 'Usage: printf \'%s\' "$PIN" | pin-hash (the PIN has 6 to 8 digits).');
  checkNewPin(given);
  io.stdout(`${await hashPin(given)}\n`);
  return 0;
}
