/** Loopback ports for the peers tests and benchmarks start: one free right now, and whether one accepts. */
import net from 'node:net';

/** A port free on 127.0.0.1 for TCP at this moment (a peer about to start binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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
