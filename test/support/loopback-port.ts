/** Loopback ports for the peers tests and benchmarks start: one free right now, and whether one accepts. */
import net from 'node:net';

/**
 * `n` different free ports. Each listener stays open until all are picked: freePort() called in a
 * row may hand out a port it just closed again, and two nginx server blocks on one port made a test
 * reach the wrong certificate (CI, 2026-11-29).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

/** A port free on 127.0.0.1 for TCP at this moment (a peer about to start binds it). */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0] as number;
}

/** Whether `port` on 127.0.0.1 accepts a TCP connection now (the connection is closed at once). */
export function acceptsConnection(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
