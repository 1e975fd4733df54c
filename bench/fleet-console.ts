/**
 * The fleet console under a fleet (part of `npm run bench:fleet`): N simulated kiosks (FLEET_BENCH_CONSOLE_N,
 * default 1000; the real kiosk link, in swarm processes) on one Mosquitto, the console started as
 * `npm run fleet` starts it (its own process), its page in Debian's Chromium. Prints what each figure
 * measures and what it leaves out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { KioskRow } from '../electron/fleet/console/view.ts';
import type { Broker } from '../test/helpers/mosquitto.ts';

const ROOT = join(import.meta.dirname, '..');

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function benchConsole(options: {
  broker: Broker;
  n: number;
  /** The console's own login (fleet-console): each login is its own client id on the shipped broker. */
  consolePassword: string;
  dataRoot: string;
  swarm: (first: number, count: number) => Promise<ChildProcess>;
  /** The broker's count of dropped messages as of now ($SYS), or null if it never said. */
  brokerDrops: () => Promise<number | null>;
}): Promise<void> {
  const { broker, n } = options;
  const children: ChildProcess[] = [];
  let consoleProc: ChildProcess | null = null;
  try {
    // The broker's own count of messages it threw away (any client, since it started), before and after.
    const droppedBefore = await options.brokerDrops();
    const perProcess = 500;
    for (let first = 0; first < n; first += perProcess) children.push(await options.swarm(first, Math.min(perProcess, n - first)));
    writeFileSync(join(options.dataRoot, 'console-password'), options.consolePassword, { mode: 0o600 });

    const startedAt = performance.now();
    consoleProc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'electron/cli/fleet-console.ts'), '--broker', broker.url, '--username', 'fleet-console', '--password-file', join(options.dataRoot, 'console-password'), '--prefix', 'ak', '--port', '0', '--client-id', `bench-${Date.now()}`, '--data-dir', join(options.dataRoot, `console-${n}`)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pageUrl = await new Promise<string>((resolve, reject) => {
      createInterface({ input: consoleProc!.stdout! }).on('line', (line) => {
        // A new data folder for each fleet size: its first start makes the operator account and prints the address that signs in.
        const m = /(http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(line);
        if (m) resolve(m[1]!);
      });
      consoleProc!.once('exit', (code) => reject(new Error(`the console exited (${code})`)));
    });
    const origin = new URL(pageUrl).origin;
    const token = new URL(pageUrl).hash.slice('#token='.length);
    const headers = { authorization: `Bearer ${token}` };

    const { chromium } = await import('playwright');
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    let shownMs = NaN;
    let scrollFrameMs = NaN;
    try {
      const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
      await page.goto(pageUrl);
      await page.locator('header .counts', { hasText: `${n} kiosks · ${n} online` }).waitFor({ timeout: 600_000 });
      shownMs = performance.now() - startedAt;
      // Scrolling the whole table: the longest frame while 1,000 rows scroll by (virtualised rows).
      scrollFrameMs = await page.evaluate(async () => {
        const box = document.querySelector('.table-scroll')!;
        let worst = 0;
        let last = performance.now();
        for (let i = 0; i < 60; i++) {
          box.scrollTop = (box.scrollHeight * i) / 60;
          await new Promise((r) => requestAnimationFrame(() => r(null)));
          const now = performance.now();
          worst = Math.max(worst, now - last);
          last = now;
        }
        return worst;
      });
    } finally {
      await browser.close();
    }

    // A ping to the whole fleet: each kiosk's answer time on the console's clock, from the moment it was sent.
    const sentAt = Date.now();
    const sent = (await (await fetch(`${origin}/api/command`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ target: { fleet: true }, command: { cmd: 'ping' } }) })).json()) as { ok: boolean; id: string; expected: string[] };
    if (!sent.ok) throw new Error(`the fleet ping was refused: ${JSON.stringify(sent)}`);
    let answered: KioskRow[] = [];
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const rows = ((await (await fetch(`${origin}/api/kiosks`, { headers })).json()) as { kiosks: KioskRow[] }).kiosks;
      answered = rows.filter((r) => r.lastAnswer?.id === sent.id);
      if (answered.length >= n) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const rtts = answered.map((r) => Date.parse(r.lastAnswer!.at) - sentAt).sort((a, b) => a - b);

    const scrapes: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      const body = await (await fetch(`${origin}/metrics`, { headers })).text();
      scrapes.push(performance.now() - t0);
      bytes = body.length;
    }
    scrapes.sort((a, b) => a - b);
    const rss = rssMb(consoleProc.pid!);
    const droppedAfter = await options.brokerDrops();
    const samples = (await (await fetch(`${origin}/metrics`, { headers })).text()).split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;

    console.log(`\nFleet console with ${n} simulated kiosks on one Mosquitto (this machine; no TLS; kiosks, broker, console and browser share its CPUs)`);
    console.log('| figure | value | what it measures | what it leaves out |');
    console.log('|---|---|---|---|');
    console.log(`| console memory (RSS) | ${rss.toFixed(0)} MB | the console process (Node, its MQTT session, state of ${n} kiosks, the web server) after the page, the ping and the scrapes | the browser showing the page; the broker |`);
    console.log(`| time to show all ${n} | ${(shownMs / 1000).toFixed(1)} s | from spawning the console process (tsx start included) to its page in Chromium saying "${n} kiosks · ${n} online" | building the page (npm run build); the kiosks' own connect time (they were up before) |`);
    console.log(`| longest frame scrolling the table | ${scrollFrameMs.toFixed(0)} ms | the slowest of 60 animation frames while the ${n}-row table scrolls top to bottom | a slower operator laptop; live updates arriving while scrolling |`);
    console.log(`| fleet ping round trip, median | ${rtts.length ? pct(rtts, 50) : NaN} ms | console sends one fleet-wide ping → broker → every kiosk link → answer → broker → console state (console clock) | the page showing it (≤ ${250} ms push interval); network latency of a real WAN |`);
    console.log(`| fleet ping round trip, p95 / slowest | ${rtts.length ? `${pct(rtts, 95)} / ${rtts.at(-1)}` : NaN} ms | as above; ${answered.length} of ${n} answered within 120 s | as above |`);
    console.log(`| /metrics scrape, median of 10 | ${pct(scrapes, 50).toFixed(1)} ms (${(bytes / 1024).toFixed(0)} KiB) | one HTTP GET of the fleet-wide metrics over loopback, rendered from the state of ${n} kiosks | Prometheus' own parsing and storage; TLS |`);
    console.log(`| /metrics series | ${samples} (${(samples / n).toFixed(1)} per kiosk) | the samples of one scrape (each a series Prometheus stores) | calls' label values: these kiosks end every call the same way |`);
    console.log(`| broker drops | ${droppedAfter === null || droppedBefore === null ? 'unknown' : droppedAfter - droppedBefore} | messages the broker dropped for any client during this stage ($SYS/broker/publish/messages/dropped) | messages lost outside the broker (none over loopback) |`);
  } finally {
    consoleProc?.kill('SIGTERM');
    for (const c of children) c.kill('SIGKILL');
  }
}

