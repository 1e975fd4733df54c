/**
 * The headless CLI: `npm run --silent cli -- <command> [options]`.
 *   probe              one whole session (see probe.ts for the contract)
 *   emulator           run the local emulator of the service for integrators
 *   voices list|clone  the caller's custom voices
 *   doctor, ledger, pin-hash  operator commands (ops-commands.ts)
 *   update-keygen, update-sign  the update feed's signature (update-commands.ts)
 *   fleet list|send|watch|visitors  the fleet console for scripts (fleet.ts)
 * Bad usage prints one line and exits 2; nothing ever prints a stack trace.
 */
import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { CALL_MODES, FREE_VOICE_CLONES, MODERATION_VALUES, VOICE_CLONE_COST, type CallMode, type Moderation } from '../core/protocol.ts';
import { createLogger, type LogLevel } from '../core/log.ts';
import { readRegularFile } from '../core/bounded-read.ts';
import { loadDemoAvatar } from './defaults.ts';
import { EXIT_FAILED, EXIT_USAGE, runProbe, type CliIo } from './probe.ts';
import { runEmulatorCommand } from './emulator-command.ts';
import { runVoicesCommand } from './voices.ts';
import { fleetCommandHelp, runFleetCommand } from './fleet.ts';
import { runDoctorCommand, runLedgerCommand, runPinHashCommand } from './ops-commands.ts';
import { runVisitorsCommand } from './visitors-command.ts';
import { forCli } from './messages.ts';
import { runUpdateKeygen, runUpdateSign } from './update-commands.ts';
import { DEFAULT_EXPIRY_DAYS, MAX_EXPIRY_DAYS } from '../fleet/feed-binding.ts';
import { MAX_COMMAND_TTL_S, MIN_COMMAND_TTL_S } from '../fleet/console/link.ts';
import { WIRE_REPORT_HOLD_S } from './wire-report.ts';

export const USAGE = `Avatar Kiosk CLI

Usage: npm run --silent cli -- <command> [options]

Commands:
  probe                 run one whole session headless, then print a report
  emulator              run the local emulator of the avatar service
  voices list           list your custom (cloned) voices
  voices clone          clone a voice: --audio-url URL --voice NAME [--language en]
                        (a clone may cost ${VOICE_CLONE_COST} credits: the first ${FREE_VOICE_CLONES} per account are free)
  doctor                the staff panel's checks: config, key, service (nothing billed); exit 0 ok,
                        1 a check failed, 2 bad usage/config. [--config PATH] [service options] [--json]
  ledger                credit totals (today / 7 days / month) from the kiosk's ledger
                        [--since YYYY-MM-DD] [--csv] [--file PATH] [--json]
  visitors              the visitor funnel from the kiosk's counts (today, the last 7 days, the largest
                        drop); counts under 5 show as "fewer than 5". [--file PATH] [--json]
  pin-hash              the hash to put in config.json as staffPinHash (the PIN itself is never stored);
                        reads the PIN (6 to 8 digits) from standard input, so it stays out of ps and the
                        shell history: printf '%s' "$PIN" | npm run --silent cli -- pin-hash
  update-keygen         a new key pair for signing the update feed: --key PATH (the private key,
                        written 0600, never overwritten); prints the public key for update.publicKeys
  update-sign           sign the feed's channel files (latest*.yml) under a release folder:
                        --key PATH DIR (writes <file>.sig beside each; kiosks install nothing unsigned),
                        each bound to its channel, platform and version; [--min-version V] the lowest
                        version kiosks may go to (default: the current release), [--expires-in-days N]
                        after which kiosks refuse it (default 30)
  fleet list            the kiosks the fleet console knows (npm run fleet must be running), a page at a
                        time: [--status online|offline|in-call|closed|problems] [--group G] [--search TEXT]
                        [--limit N (100; 0: all)] [--offset N] [--json]
  fleet send KIOSK[,KIOSK…]|--group G|--all COMMAND [ARG]
                        prints each kiosk's answer as it comes; exit 1 if one refused or expired, or none
                        came in --wait S (10). [--expires S] how long it stays valid for a kiosk that is
                        offline (120; 10 to 86400); [--first-wave N] staged: N kiosks first, the rest only
                        if all of them ran it. ARG: the command's argument (set-volume 40), or a JSON
                        object of the whole command ('{"force":true}'). COMMAND is one of:
${fleetCommandHelp()}  fleet watch           one line per kiosk change (online/offline, phase, error) until Ctrl+C [--json]
  fleet audit           the latest commands: when, who, what, to whom, how it went [--limit N (20)]
                        [--id ID: that command's answers] [--json]
  fleet visitors        the day's visitor funnel of the fleet and its groups (thresholded) [--json]
                        --console URL (default http://127.0.0.1:8790, or FLEET_CONSOLE_URL),
                        --token-file PATH (or FLEET_CONSOLE_TOKEN): an account's token (a viewer's
                        lists and watches; an operator's also sends)

Service (probe, voices). With neither URL the embedded emulator is used:
  --base-url URL        direct surface root {base_url} (needs an API key)
  --gateway-url URL     gateway surface root {gateway_url} (sends no key)
  AVATAR_API_KEY        direct surface key: the environment variable is preferred
  --api-key-file PATH   or a file holding the key (readable by you only)
  --api-key KEY         also works, but shows the key in the process list and shell history

probe:
  --mode audio|video    call mode (default video)
  --image PATH|URL      avatar image: PNG, JPEG or WEBP file, http(s) URL or data: URI (default: bundled demo)
  --persona TEXT        who the avatar is (default: bundled demo persona)
  --name NAME           display name (default: bundled demo name)
  --voice NAME          voice id or custom voice name (default Tina)
  --moderation strict|disabled  the service's content review (default strict, as a public kiosk sends)
  --extra-motion true|false
  --hold SECONDS        stay live this long, then hang up with user_end (default 10; 1 with --wire-report)
  --json                exactly one JSON object on stdout at the end; logs on stderr
  --wire-report FILE    record what the service sends (shapes only, no key, token, id or persona) to FILE
                        as JSON; prints the call's cost first (about 3 credits at the default hold)

emulator:
  --host HOST --port N  where to listen (default 127.0.0.1, a free port)
  --warmup-ms N         video warm-up (NOT_READY) length; --latency-ms N injected latency
  --json                print {base_url, gateway_url, api_key} as one JSON line

Common: --verbose (debug logs on stderr), --help
`;

/** Every option the CLI takes (--help and docs/cli.md list each; test/unit/project/docs-match-code.test.ts checks). */
export const CLI_OPTIONS = {
  'base-url': { type: 'string' },
  'gateway-url': { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-file': { type: 'string' },
  mode: { type: 'string' },
  image: { type: 'string' },
  persona: { type: 'string' },
  name: { type: 'string' },
  voice: { type: 'string' },
  moderation: { type: 'string' },
  'extra-motion': { type: 'string' },
  hold: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  host: { type: 'string' },
  port: { type: 'string' },
  'warmup-ms': { type: 'string' },
  'latency-ms': { type: 'string' },
  'audio-url': { type: 'string' },
  language: { type: 'string' },
  config: { type: 'string' },
  since: { type: 'string' },
  csv: { type: 'boolean' },
  file: { type: 'string' },
  key: { type: 'string' },
  'min-version': { type: 'string' },
  'expires-in-days': { type: 'string' },
  console: { type: 'string' },
  'token-file': { type: 'string' },
  group: { type: 'string' },
  all: { type: 'boolean' },
  wait: { type: 'string' },
  expires: { type: 'string' },
  'first-wave': { type: 'string' },
  status: { type: 'string' },
  search: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  id: { type: 'string' },
  'wire-report': { type: 'string' },
} as const;

export type ParsedOptions = ReturnType<typeof parseCli>['values'];

export function parseCli(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: CLI_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    // node:util's messages are already one clear line ("Unknown option '--foo'…").
    throw new AvatarError('invalid_request', toAvatarError(err).message.split('\n')[0] ?? 'Invalid arguments.');
  }
}

export function numberOption(value: string | undefined, name: string, fallback: number, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new AvatarError('invalid_request', `--${name} must be a number from ${min} to ${max} (got "${value}").`);
  }
  return n;
}

function integerOption(value: string, name: string, min: number, max: number): number {
  const n = numberOption(value, name, 0, { min, max });
  if (!Number.isInteger(n)) throw new AvatarError('invalid_request', `--${name} must be a whole number from ${min} to ${max} (got "${value}").`);
  return n;
}

function enumOption<T extends string>(value: string | undefined, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new AvatarError('invalid_request', `--${name} must be one of ${allowed.join(', ')} (got "${value}").`);
  }
  return value as T;
}

/** --wire-report FILE: a file to write, named (not an option mistaken for one). */
function wireReportOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '' || value.startsWith('-')) throw new AvatarError('invalid_request', `--wire-report needs a file name (got "${value}").`);
  return value;
}

function booleanOption(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new AvatarError('invalid_request', `--${name} must be true or false (got "${value}").`);
}

function processIo(verbose: boolean, json: boolean): CliIo {
  const level: LogLevel = verbose ? 'debug' : json ? 'error' : 'warn';
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    logger: createLogger({ level, scope: 'cli' }),
    onSignal(handler) {
      const onInt = () => handler('SIGINT');
      const onTerm = () => handler('SIGTERM');
      // A bug must not leave a session billing: log one line (no stack on a user's screen unless
      // --verbose), then hang up through the same path as a signal.
      const onFatal = (error: unknown) => {
        process.stderr.write(`cli: unexpected error: ${verbose && error instanceof Error ? error.stack : toAvatarError(error).message}\n`);
        handler('fatal');
      };
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      process.on('uncaughtException', onFatal);
      process.on('unhandledRejection', onFatal);
      return () => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        process.off('uncaughtException', onFatal);
        process.off('unhandledRejection', onFatal);
      };
    },
  };
}

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCli(argv);
  } catch (err) {
    process.stderr.write(`cli: ${toAvatarError(err).message} (see --help)\n`);
    return EXIT_USAGE;
  }
  const { values, positionals } = parsed;
  const [command, sub] = positionals;
  if (values.help || !command || command === 'help') {
    process.stdout.write(USAGE);
    return command || values.help ? 0 : EXIT_USAGE;
  }
  const io = processIo(values.verbose ?? false, values.json ?? false);
  try {
    const apiKey = await apiKeyOption(values, io);
    switch (command) {
      case 'probe': {
        const demo = loadDemoAvatar();
        const mode = enumOption<CallMode>(values.mode, 'mode', CALL_MODES) ?? 'video';
        return await runProbe(
          {
            baseUrl: values['base-url'],
            gatewayUrl: values['gateway-url'],
            apiKey,
            mode,
            image: values.image ?? demo.image,
            persona: values.persona ?? demo.persona,
            name: values.name ?? (values.image ? undefined : demo.name),
            voice: values.voice ?? demo.voice,
            // Safe by default, as a public kiosk: the gateway's own default would be `disabled` (spec §4.1).
            moderation: enumOption<Moderation>(values.moderation, 'moderation', MODERATION_VALUES) ?? 'strict',
            extraMotion: booleanOption(values['extra-motion'], 'extra-motion'),
            holdSeconds: numberOption(values.hold, 'hold', values['wire-report'] === undefined ? 10 : WIRE_REPORT_HOLD_S, { min: 0, max: 7200 }),
            json: values.json ?? false,
            wireReport: wireReportOption(values['wire-report']),
          },
          io,
        );
      }
      case 'emulator':
        return await runEmulatorCommand(
          {
            host: values.host ?? '127.0.0.1',
            port: numberOption(values.port, 'port', 0, { min: 0, max: 65535 }),
            warmupMs: values['warmup-ms'] === undefined ? undefined : numberOption(values['warmup-ms'], 'warmup-ms', 0, { max: 600_000 }),
            latencyMs: values['latency-ms'] === undefined ? undefined : numberOption(values['latency-ms'], 'latency-ms', 0, { max: 60_000 }),
            json: values.json ?? false,
          },
          io,
        );
      case 'voices':
        return await runVoicesCommand(
          sub,
          {
            baseUrl: values['base-url'],
            gatewayUrl: values['gateway-url'],
            apiKey,
            audioUrl: values['audio-url'],
            voice: values.voice,
            language: values.language,
            json: values.json ?? false,
          },
          io,
        );
      case 'doctor':
        return await runDoctorCommand(
          { configPath: values.config, baseUrl: values['base-url'], gatewayUrl: values['gateway-url'], apiKey, json: values.json ?? false },
          io,
        );
      case 'ledger':
        return await runLedgerCommand({ since: values.since, csv: values.csv ?? false, file: values.file, json: values.json ?? false }, io);
      case 'visitors':
        return runVisitorsCommand({ file: values.file, json: values.json ?? false }, io);
      case 'pin-hash':
        return await runPinHashCommand(sub, io, readStdin);
      case 'update-keygen':
        return runUpdateKeygen({ key: values.key }, io);
      case 'update-sign':
        return runUpdateSign(
          { key: values.key, dir: sub, minVersion: values['min-version'], expiresInDays: numberOption(values['expires-in-days'], 'expires-in-days', DEFAULT_EXPIRY_DAYS, { min: 1, max: MAX_EXPIRY_DAYS }) },
          io,
        );
      case 'fleet':
        return await runFleetCommand(
          positionals.slice(1),
          {
            consoleUrl: values.console,
            tokenFile: values['token-file'],
            group: values.group,
            all: values.all ?? false,
            waitS: numberOption(values.wait, 'wait', 10, { max: 3600 }),
            json: values.json ?? false,
            expiresS: values.expires === undefined ? undefined : integerOption(values.expires, 'expires', MIN_COMMAND_TTL_S, MAX_COMMAND_TTL_S),
            firstWave: values['first-wave'] === undefined ? undefined : integerOption(values['first-wave'], 'first-wave', 1, 100_000),
            status: values.status,
            search: values.search,
            limit: values.limit === undefined ? undefined : integerOption(values.limit, 'limit', 0, 1_000_000),
            offset: values.offset === undefined ? undefined : integerOption(values.offset, 'offset', 0, 1_000_000),
            id: values.id,
          },
          io,
        );
      default:
        io.stderr(`cli: unknown command "${command}" (commands: probe, emulator, voices, doctor, ledger, visitors, pin-hash, update-keygen, update-sign, fleet; see --help)\n`);
        return EXIT_USAGE;
    }
  } catch (err) {
    const error = toAvatarError(err);
    io.stderr(`cli: ${forCli(error.message)}\n`);
    return error.code === 'invalid_request' || error.code === 'invalid_config' ? EXIT_USAGE : EXIT_FAILED;
  }
}

/** The key from `--api-key-file` or `--api-key` (undefined: the environment's, if any). A key on the
 *  command line shows in `ps` and the shell history, so it works but is warned about. */
async function apiKeyOption(values: ParsedOptions, io: CliIo): Promise<string | undefined> {
  const file = values['api-key-file'];
  if (file !== undefined && values['api-key'] !== undefined) throw new AvatarError('invalid_request', 'Give either --api-key or --api-key-file, not both.');
  if (values['api-key'] !== undefined) {
    io.stderr('cli: warning: --api-key shows the key in the process list and shell history; prefer AVATAR_API_KEY or --api-key-file.\n');
    return values['api-key'];
  }
  if (file === undefined) return undefined;
  const access = keyFileAccessProblem(file);
  if (access?.refuse) throw new AvatarError('invalid_request', access.message);
  if (access) io.stderr(`cli: warning: ${access.message}\n`);
  let bytes: Uint8Array;
  try {
    bytes = await readRegularFile(file, 4096, 'The API key file');
  } catch (error) {
    if (error instanceof AvatarError) throw error;
    throw new AvatarError('invalid_request', `The API key file ${file} could not be read (${(error as { code?: string }).code ?? 'error'}).`);
  }
  const key = new TextDecoder().decode(bytes).trim();
  if (!key) throw new AvatarError('invalid_request', `The API key file ${file} is empty.`);
  return key;
}

/**
 * A key file other users can read is refused (as ssh refuses such a private key): the key spends the
 * venue's credits. One that only the file's group can read is taken with a warning. POSIX only.
 */
export function keyFileAccessProblem(file: string, platform: NodeJS.Platform = process.platform): { refuse: boolean; message: string } | null {
  if (platform === 'win32') return null;
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    return null; // reading it says what is wrong
  }
  const octal = mode.toString(8).padStart(3, '0');
  if (mode & 0o006) return { refuse: true, message: `The API key file ${file} can be read by every user of this computer (mode ${octal}); make it yours only (chmod 600 ${file}) and run again.` };
  if (mode & 0o060) return { refuse: false, message: `the API key file ${file} can be read by its group (mode ${octal}); chmod 600 ${file} keeps it yours only.` };
  return null;
}

/** Standard input as text, at most 1 KB (a PIN, not a file). */
async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.length > 1024) throw new AvatarError('invalid_request', 'Standard input is too long for a PIN.');
  }
  return text;
}

// Run when executed directly (not when imported by tests).
if (process.argv[1] && import.meta.filename === (await import('node:fs')).realpathSync(process.argv[1])) {
  const code = await main(process.argv.slice(2));
  process.exitCode = code;
  // Let stdout drain, then leave even if a library left a handle open (bounded: everything is closed).
  setTimeout(() => process.exit(code), 50).unref();
}
