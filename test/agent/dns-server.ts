/**
 * A real DNS server for the DNS check tests: Debian's dnsmasq, started per test file on 127.0.0.1 at
 * a free unprivileged port with a configuration the test writes (records given with --host-record,
 * --txt-record, ...), authoritative for its zone so SOA and NS are answered too, forwarding nothing.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DnsmasqServer {
  port: number;
  stop(): Promise<void>;
}

/** Fails loudly when dnsmasq is missing: CI installs it (.ci/run), a test must not pass without it. */
export function dnsmasqPath(): string {
  for (const candidate of ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq']) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {}
  }
  throw new Error('dnsmasq is not installed (apt-get install dnsmasq-base; .ci/run does this)');
}

/** A port free on 127.0.0.1 for TCP at this moment (dnsmasq binds UDP and TCP on it). */
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

/** Starts dnsmasq with `lines` (configuration file lines) and resolves once it has bound its port. */
export async function startDnsmasq(lines: string[]): Promise<DnsmasqServer> {
  const binary = dnsmasqPath();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-dnsmasq-'));
  const port = await freePort();
  const conf = join(dir, 'dnsmasq.conf');
  writeFileSync(
    conf,
    [
      `port=${port}`,
      'listen-address=127.0.0.1',
      'bind-interfaces',
      'no-resolv',
      'no-hosts',
      'no-poll',
      'user=root',
      `pid-file=${join(dir, 'dnsmasq.pid')}`,
      'log-facility=-',
      'log-queries',
      ...lines,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(binary, ['--keep-in-foreground', `--conf-file=${conf}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      // dnsmasq says "started" once its sockets are bound; a bad option makes it exit instead.
      if (/started, version/.test(output)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`dnsmasq exited (${code}) before it started:\n${output}`)));
    child.once('error', reject);
  });
  return {
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
