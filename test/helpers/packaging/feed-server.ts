/**
 * The update feed as a web server serves it, on 127.0.0.1 and port 0: the files under a folder, each request
 * recorded, and, for the attacks, whatever the server's holder serves instead at a path (`swapped`). Also the
 * CLI as the release machine runs it (`update-keygen`, `update-sign`), in its own process.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve, sep } from 'node:path';
import { ROOT } from './build.ts';

export interface FeedServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Every path asked for, in order. */
  requests: string[];
  /** Request path → the file served there instead of the folder's own. */
  swapped: Map<string, string>;
  close(): Promise<void>;
}

export async function serveFeed(root: string): Promise<FeedServer> {
  const requests: string[] = [];
  const swapped = new Map<string, string>();
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requests.push(path);
    const swap = swapped.get(path);
    const file = swap ?? resolve(root, `.${path}`);
    if ((!swap && !file.startsWith(root + sep)) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    const body = readFileSync(file);
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    swapped,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The project's CLI in its own process (as `npm run cli --` runs it). */
export function runCli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'electron/cli/index.ts'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
