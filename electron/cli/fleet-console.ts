/**
 * `npm run fleet -- [--broker mqtts://host:8883 --username U --password-file F --ca-file F]`: the fleet
 * console on this computer (electron/fleet/console). With no --broker it starts a demo: its own
 * Mosquitto on 127.0.0.1 and a few simulated kiosks, so a newcomer sees it work.
 *
 * It keeps what it remembers, its audit log and its accounts in its data folder (--data-dir). On the
 * first start it makes the operator account "admin" and shows its token once (also written to
 * admin.token there); after that it never prints a token: the page asks for one.
 * `npm run fleet -- account add|list|remove` manages the accounts (operator or read-only viewer).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { settledWithin, systemClock } from '../core/clock.ts';
import { readRegularFile } from '../core/bounded-read.ts';
import { createLogger } from '../core/log.ts';
import { brokerUrlProblem } from '../kiosk/fleet-config.ts';
import { ACCOUNTS_FILE, addAccount, FIRST_ACCOUNT, listAccounts, openAccountsFile, removeAccount, ROLES, type Role } from '../fleet/console/accounts.ts';
import { startDemoBroker, type DemoBroker } from '../fleet/console/demo-broker.ts';
import { startFleetConsole } from '../fleet/console/index.ts';
import { demoScreenshot, startSimulatedKiosk, type SimulatedKiosk } from '../fleet/console/simulated.ts';
import { userConfigRoot } from '../core/user-folders.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const FLEET_USAGE = `Fleet console: npm run fleet -- [options]
       npm run fleet -- account add NAME [--role operator|viewer] [--token-file PATH] | account list | account remove NAME

  --broker URL          the fleet's broker (mqtts://host:8883; mqtt:// only on this computer).
                        None: a demo with its own Mosquitto and simulated kiosks.
  --username NAME       the operator's broker login; --password-file PATH holds its password
  --ca-file PATH        the broker's CA (PEM) when it is not a public one
  --prefix PREFIX       the kiosks' mqtt.topicPrefix (default avatar-kiosk)
  --client-id ID        the console's persistent session id (default avatar-fleet-console)
  --port N              where the page is served (default 8790; 0: a free port)
  --listen ADDRESS      default 127.0.0.1. Anything else opens the console to the network: only
                        behind a TLS reverse proxy, and the token is then all that guards it.
  --allowed-host NAME   a host name the page may be reached under (a reverse proxy's), repeatable
  --data-dir DIR        what the console remembers, its audit log and its accounts (default
                        ~/.config/avatar-kiosk-fleet; the demo: a new temporary folder)
  --demo-kiosks N       simulated kiosks in the demo (default 6)

Accounts (each with its own token; the audit log names who sent what):
  account add NAME      a new account; its token is printed once (or written to --token-file PATH,
                        0600, for Prometheus or a script). --role operator (default) sends commands,
                        --role viewer only looks.
  account list          the accounts and their roles (never the tokens)
  account remove NAME   its token and its browser sessions stop working at once
`;

/** The console's data folder when none is given: beside the kiosk's own settings folder. */
export function defaultDataDir(env: Record<string, string | undefined> = process.env, platform: NodeJS.Platform = process.platform, home = homedir()): string {
  return join(userConfigRoot(env, platform, home), 'avatar-kiosk-fleet');
}

const say = (line: string) => process.stdout.write(`${line}\n`);

async function readSecret(path: string, what: string): Promise<string> {
  const text = new TextDecoder().decode(await readRegularFile(path, 4096, what)).trim();
  if (!text) throw new Error(`${what} ${path} is empty.`);
  return text;
}

/** `account add|list|remove`: prints one line per result; the token once (or into --token-file). */
function accounts(argv: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { role: { type: 'string' }, 'token-file': { type: 'string' }, 'data-dir': { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (error) {
    return usage((error as Error).message.split('\n')[0]!);
  }
  const [action, name] = parsed.positionals;
  const dir = parsed.values['data-dir'] ?? defaultDataDir();
  const file = join(dir, ACCOUNTS_FILE);
  try {
    if (action === 'list') {
      const all = listAccounts(file);
      say(all.length ? all.map((a) => `${a.name}\t${a.role}`).join('\n') : `No accounts yet in ${file} (the console makes "${FIRST_ACCOUNT}" on its first start).`);
      return 0;
    }
    if (!name || (action !== 'add' && action !== 'remove')) return usage('account needs add NAME, list or remove NAME.');
    if (action === 'remove') {
      if (!removeAccount(file, name)) return usage(`There is no account "${name}" in ${file}.`);
      say(`Removed "${name}": its token and its browser sessions no longer work.`);
      return 0;
    }
    const role = (parsed.values.role ?? 'operator') as Role;
    if (!(ROLES as readonly string[]).includes(role)) return usage(`--role must be ${ROLES.join(' or ')} (got "${role}").`);
    const tokenFile = parsed.values['token-file'];
    if (tokenFile && existsSync(tokenFile)) return usage(`${tokenFile} exists; choose a new file for the token.`);
    const token = addAccount(file, name, role, Date.now());
    if (tokenFile) {
      writeFileSync(tokenFile, `${token}\n`, { mode: 0o600, flag: 'wx' });
      say(`Added "${name}" (${role}); its token is in ${tokenFile} (readable by you only). It is not shown again.`);
    } else say(`Added "${name}" (${role}). Its token, shown this once (keep it like a password):\n  ${token}`);
    return 0;
  } catch (error) {
    say(`fleet: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'account') return accounts(argv.slice(1));
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        broker: { type: 'string' },
        username: { type: 'string' },
        'password-file': { type: 'string' },
        'ca-file': { type: 'string' },
        prefix: { type: 'string' },
        'client-id': { type: 'string' },
        port: { type: 'string' },
        listen: { type: 'string' },
        'allowed-host': { type: 'string', multiple: true },
        'token-file': { type: 'string' },
        'data-dir': { type: 'string' },
        'demo-kiosks': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (error) {
    say(`fleet: ${(error as Error).message.split('\n')[0]} (see --help)`);
    return 2;
  }
  if (values.help) {
    say(FLEET_USAGE);
    return 0;
  }
  if (values['token-file']) return usage('--token-file is replaced by accounts, each with its own token: `npm run fleet -- account add prometheus --role viewer --token-file PATH` writes one for Prometheus.');
  const port = Number(values.port ?? 8790);
  const kioskCount = Number(values['demo-kiosks'] ?? 6);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return usage(`--port must be 0 to 65535 (got "${values.port}").`);
  if (!Number.isInteger(kioskCount) || kioskCount < 0 || kioskCount > 2000) return usage(`--demo-kiosks must be 0 to 2000 (got "${values['demo-kiosks']}").`);
  if (values.broker && brokerUrlProblem(values.broker)) return usage(`--broker ${brokerUrlProblem(values.broker)}.`);
  if (values['password-file'] && !values.username) return usage('--password-file needs --username.');
  const prefix = values.prefix ?? 'avatar-kiosk';
  if (!/^[A-Za-z0-9_.-]{1,64}(\/[A-Za-z0-9_.-]{1,64}){0,3}$/.test(prefix)) return usage(`--prefix must be 1-4 topic levels (got "${prefix}").`);
  if (values.listen && values.listen !== '127.0.0.1' && values.listen !== '::1' && values.listen !== 'localhost') {
    say(`Warning: --listen ${values.listen} opens the fleet console to the network. Put a TLS reverse proxy in front; the token is all that guards it.`);
  }

  const logger = createLogger({ level: 'warn', scope: 'fleet' });
  let demo: DemoBroker | null = null;
  const kiosks: SimulatedKiosk[] = [];
  let dataRoot: string | null = null;
  let demoDir: string | null = null;
  let console_: Awaited<ReturnType<typeof startFleetConsole>> | null = null;
  // Ctrl+C, a service manager's SIGTERM or a hang-up at any moment, start-up included, stops what was
  // started and removes the demo's temporary folders (a signal's default action would skip both).
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    // Ctrl+C reaches the demo's Mosquitto too (one process group): a close that waits on a broker already
    // gone is given up after a moment, so the folders are still removed and the process still ends.
    await Promise.allSettled(kiosks.map((k) => settledWithin(k.close(), CLOSE_WAIT_MS)));
    await settledWithin(console_?.close() ?? Promise.resolve(), CLOSE_WAIT_MS);
    await settledWithin(demo?.stop() ?? Promise.resolve(), CLOSE_WAIT_MS);
    if (dataRoot) rmSync(dataRoot, { recursive: true, force: true });
    if (demoDir) rmSync(demoDir, { recursive: true, force: true });
    process.exit(0);
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => void stop());
  let url = values.broker;
  if (!url) {
    demo = await startDemoBroker();
    url = demo.url;
  }
  // The demo starts afresh each time (its broker is new), unless told where to keep things.
  if (demo && !values['data-dir']) {
    const made = mkdtempSync(join(tmpdir(), 'ak-fleet-demo-console-'));
    demoDir = made;
    // Any exit that skips stop() (an uncaught error) still removes it.
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  const dataDir = values['data-dir'] ?? demoDir ?? defaultDataDir();
  const accountsFile = join(dataDir, ACCOUNTS_FILE);
  let firstToken: string | null = null;
  if (!listAccounts(accountsFile).length) {
    firstToken = addAccount(accountsFile, FIRST_ACCOUNT, 'operator', Date.now());
    writeFileSync(join(dataDir, `${FIRST_ACCOUNT}.token`), `${firstToken}\n`, { mode: 0o600 });
  }
  console_ = await startFleetConsole({
    brokerUrl: url,
    topicPrefix: prefix,
    clientId: values['client-id'] ?? 'avatar-fleet-console',
    ...(values.username ? { username: values.username } : {}),
    ...(values['password-file'] ? { password: await readSecret(values['password-file'], 'The password file') } : {}),
    ...(values['ca-file'] ? { ca: readFileSync(values['ca-file']) } : {}),
    accounts: openAccountsFile(accountsFile, { logger }),
    dataDir,
    pageDir: join(ROOT, 'out', 'fleet-console'),
    ...(values.listen ? { host: values.listen } : {}),
    ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    port,
    logger,
  });
  if (demo) {
    const made = mkdtempSync(join(tmpdir(), 'ak-fleet-demo-kiosks-'));
    dataRoot = made;
    // Any exit that skips stop() (an uncaught error) still removes it.
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    const png = demoScreenshot(ROOT);
    const groups = ['lobby', 'lobby', 'shop', 'shop', 'cafe'];
    for (let i = 0; i < kioskCount; i++) {
      const kioskId = `demo-${String(i + 1).padStart(2, '0')}`;
      const k = startSimulatedKiosk({ url, kioskId, group: groups[i % groups.length]!, topicPrefix: prefix, dataDir: join(dataRoot, kioskId), clock: systemClock, screenshotPng: png, avatars: ['ava', 'max'] });
      kiosks.push(k);
    }
    // The demo kiosks take calls now and then, so the page and /metrics have something to show.
    setInterval(() => {
      const k = kiosks[Math.floor(Math.random() * kiosks.length)];
      if (!k) return;
      if (k.inCall) k.endCall(Math.random() < 0.1 ? 'media_stalled' : 'user_end', 3 * Math.ceil(Math.random() * 40)); // whole credits, as the service bills
      else k.startCall();
    }, 3000).unref();
  }
  await console_.link.ready(20_000).catch((error: Error) => say(`Warning: ${error.message} The console keeps trying.`));
  say(`Fleet console for ${demo ? `a demo (${kioskCount} simulated kiosks, Mosquitto at ${url})` : url}, topics ${prefix}/…; it keeps its memory and audit log in ${dataDir}`);
  if (firstToken) {
    // The one time a token is printed: the first start, when nobody has one yet.
    say(`First start: the operator account "${FIRST_ACCOUNT}" was made. Its token, shown this once (also in ${join(dataDir, `${FIRST_ACCOUNT}.token`)}, readable by you only):`);
    say(`  ${firstToken}`);
    say(`Open (signs you in; keep it private):\n  ${console_.server.origin}/#token=${firstToken}`);
  } else {
    say(`Open ${console_.server.origin}/ and sign in with your account's token (accounts: ${listAccounts(accountsFile).map((a) => `${a.name} (${a.role})`).join(', ')}).`);
  }
  say(`Prometheus: scrape ${console_.server.origin}/metrics with a viewer's token ("npm run fleet -- account add prometheus --role viewer --token-file PATH"). Stop with Ctrl+C.`);
  return -1;
}

/** How long stopping waits for each part (a kiosk's, the console's link, the broker) to close. */
const CLOSE_WAIT_MS = 2_000;

function usage(message: string): number {
  say(`fleet: ${message} (see --help)`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    say(`The fleet console could not start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
