/**
 * A venue's HTTP CONNECT proxy on 127.0.0.1 for tests of what goes through it: it notes each CONNECT
 * target as asked (`broker.test:8883`) and the first bytes the client sends inside the tunnel, and sends
 * every tunnel to one port on 127.0.0.1 whatever host was asked (or, with no port, keeps the bytes and
 * answers nothing), so a test can name hosts that do not resolve.
 */
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

export interface RedirectingProxy {
  readonly url: string;
  /** Each CONNECT's target, as the client asked. */
  readonly targets: string[];
  /** The first bytes each tunnel carried from the client. */
  readonly firstBytes: Buffer[];
  /** Where tunnels go now (null: nowhere, the bytes are only noted). */
  targetPort: number | null;
  close(): Promise<void>;
}

export async function redirectingProxy(targetPort: number | null = null): Promise<RedirectingProxy> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  const proxy: RedirectingProxy = {
    url: '',
    targets: [],
    firstBytes: [],
    targetPort,
    async close() {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  server.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
    proxy.targets.push(req.url ?? '');
    sockets.add(client);
    client.on('error', () => undefined);
    client.once('data', (chunk: Buffer) => proxy.firstBytes.push(chunk));
    const port = proxy.targetPort;
    if (port === null) {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      return;
    }
    const upstream = net.connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return Object.assign(proxy, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}
