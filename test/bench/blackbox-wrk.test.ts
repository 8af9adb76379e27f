import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Blackbox, probeWithWrk, startBlackbox } from '../../scripts/bench/_blackbox.ts';

/** A TCP port that accepts connections, and one that refuses them (a port that was free a moment ago). */
async function listen(): Promise<net.Server> {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('blackbox_exporter driven by wrk (scripts/bench/_blackbox.ts)', () => {
  let blackbox: Blackbox;
  let open: net.Server;
  let closedPort = 0;
  beforeAll(async () => {
    blackbox = await startBlackbox();
    open = await listen();
    const gone = await listen();
    closedPort = (gone.address() as net.AddressInfo).port;
    await new Promise((r) => gone.close(r));
  });
  afterAll(async () => {
    await blackbox?.stop();
    open?.close();
  });

  /** A second of TCP-connect probes of a loopback port, two at a time. */
  const probePort = (port: number) =>
    probeWithWrk({ blackbox, module: 'tcp_connect', target: `127.0.0.1:${port}`, concurrency: 2, duration: 1 });

  it('counts probes that succeed', async () => {
    const r = await probePort((open.address() as net.AddressInfo).port);
    expect(r.probes).toBeGreaterThan(0);
    expect(r.failures).toBe(0);
    expect(r.probesPerSecond).toBeGreaterThan(0);
  });

  it('counts a probe that fails as failed, though blackbox_exporter answers it with 200', async () => {
    const r = await probePort(closedPort);
    expect(r.probes).toBeGreaterThan(0);
    expect(r.failures).toBe(r.probes);
  });
});
