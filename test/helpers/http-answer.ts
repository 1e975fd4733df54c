/**
 * Plain HTTP/1.1 exchanges with a server on 127.0.0.1, read back whole: status, headers and body for a
 * request, or the raw reply for hand-written bytes (a request a client library would never send).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { httpRequest } from './http-request.ts';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request to 127.0.0.1 on its own connection (httpRequest), without the raw bytes. */
export async function httpAnswer(port: number, path: string, options: { method?: string; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<HttpAnswer> {
  const { status, headers, body } = await httpRequest(`http://127.0.0.1:${port}`, path, { timeoutMs: 5_000, ...options });
  return { status, headers, body };
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
