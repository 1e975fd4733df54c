/**
 * Plain HTTP/1.1 exchanges with a server on 127.0.0.1, read back whole: status, headers and body for a
 * request, or the raw reply for hand-written bytes (a request a client library would never send).
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection; rejects on a socket error or after `timeoutMs` without an answer. */
export function httpAnswer(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(options.timeoutMs ?? 5_000, () => req.destroy(new Error('no answer in time')));
    req.end();
  });
}

/** Writes `bytes` (latin1) on a new connection and answers everything the server sent until it closed. */
export function rawExchange(port: number, bytes: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(Buffer.from(bytes, 'latin1')));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('the server did not close in time')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

/** Opens `n` connections that send nothing; `closed()` counts the ones the server has closed so far. */
export async function silentConnections(port: number, n: number): Promise<{ sockets: Socket[]; closed: () => number }> {
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.on('error', () => undefined); // a reset from the server is one of the closes counted
          s.once('close', () => closed++);
          s.once('error', reject);
        }),
    ),
  );
  return { sockets, closed: () => closed };
}
