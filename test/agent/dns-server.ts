/**
 * A real DNS server for the DNS check tests: Debian's dnsmasq, started per test file on 127.0.0.1 at
 * a free unprivileged port with a configuration the test writes (records given with --host-record,
 * --txt-record, ...), authoritative for its zone so SOA and NS are answered too, forwarding nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedBinary, stopChild } from '../support/daemon-process.ts';
import { freePort } from '../support/loopback-port.ts';

// Re-exported: test files that start dnsmasq beside other peers import the free port from here.
export { freePort };

export interface DnsmasqServer {
  port: number;
  stop(): Promise<void>;
}

/** Fails loudly when dnsmasq is missing: CI installs it (.ci/run), a test must not pass without it. */
export function dnsmasqPath(): string {
  return installedBinary(
    ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'],
    ['--version'],
    'dnsmasq is not installed (apt-get install dnsmasq-base; .ci/run does this)',
  );
}

/** Starts dnsmasq with `lines` (configuration file lines) and resolves once it has bound its port. */
export async function startDnsmasq(lines: string[]): Promise<DnsmasqServer> {
  const binary = dnsmasqPath();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-dnsmasq-'));
  // Free for TCP now; dnsmasq binds UDP and TCP on it.
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
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
