/** A plain HTTP request from a test (node:http, no keep-alive), answered with its status, headers and body. */
import { request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body's bytes (a picture, a file). */
  bytes: Buffer;
}

/** `origin` (`http://127.0.0.1:1234`) and `path` (with its query); destroyed after `timeoutMs` (real time). */
export function httpRequest(origin: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {}): Promise<Reply> {
  const url = new URL(path, origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port, path: url.pathname + url.search, method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes.toString(), bytes });
      });
    });
    req.on('error', reject);
    req.setTimeout(options.timeoutMs ?? 15_000, () => req.destroy(new Error('timeout')));
    req.end(options.body);
  });
}
