/**
 * Targets for the TCP check tests: Debian's nginx on a loopback HTTP port (a real server no one here
 * wrote), started per test file with a temp configuration in a single foreground process, and small
 * node:net servers whose behaviour a test picks (echo, banner, flood, silence, reset), and the
 * builder of TCP check definitions.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TcpCheckDefinition, TcpRequest } from '../../src/shared/checks/types.ts';
import { uptimeCheckBase } from '../support/check-definition.ts';
import { installedBinary, stopChild } from '../support/daemon-process.ts';
import { acceptsConnection, freePort } from '../support/loopback-port.ts';

export interface NginxServer {
  port: number;
  /** nginx's prefix: its configuration, logs and temp files; removed on stop. */
  dir: string;
  stop(): Promise<void>;
}

/** Fails loudly when nginx is missing: CI installs it (.ci/run), a test must not pass without it. */
function nginxPath(): string {
  return installedBinary(
    ['/usr/sbin/nginx', '/usr/bin/nginx'],
    ['-v'],
    'nginx is not installed (apt-get install nginx-light; .ci/run does this)',
  );
}

const HELLO = 'location / { default_type text/plain; return 200 "hello from nginx\\n"; }';

/** `locations`: the server block's contents, given nginx's prefix dir (the default answers a fixed hello). */
export async function startNginx(locations: (dir: string) => string = () => HELLO): Promise<NginxServer> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-nginx-'));
  const port = await freePort();
  const nginx = await runNginx(dir, [`server {\n    listen 127.0.0.1:${port};\n    ${locations(dir)}\n  }`], [port]);
  return { port, dir, stop: nginx.stop };
}

/**
 * An nginx.conf that keeps nginx inside its prefix `dir` (pid, error log and every temp path there, no
 * access log), with the `main` directives first and `servers` (server blocks) in its http block.
 */
export function nginxConfig(
  dir: string,
  servers: readonly string[],
  main: readonly string[],
  workerConnections: number,
): string {
  return `${main.join('\n')}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections ${workerConnections}; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${servers.join('\n  ')}
}
`;
}

/**
 * Debian's nginx in the foreground with prefix `dir` (removed on stop), serving `servers` (server
 * blocks); resolves once every one of `ports` accepts a connection.
 */
export async function runNginx(
  dir: string,
  servers: readonly string[],
  ports: readonly number[],
): Promise<{ stop(): Promise<void> }> {
  const binary = nginxPath();
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, servers, ['daemon off;', 'master_process off;'], 64));
  const child: ChildProcess = spawn(binary, ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`nginx exited (${code}) before it listened:\n${stderr}`))),
  );
  exited.catch(() => {});
  // nginx prints nothing when ready; its ports accepting a connection is the event to wait for.
  const listening = (async () => {
    for (const port of ports) while (!(await acceptsConnection(port))) await new Promise((r) => setTimeout(r, 20));
  })();
  await Promise.race([listening, exited]);
  return {
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface NetServer {
  port: number;
  close(): Promise<void>;
}

/** A node:net server on `host` whose connections `onConnection` handles. */
export async function startNetServer(
  onConnection: (socket: net.Socket) => void,
  host = '127.0.0.1',
): Promise<NetServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A listening socket whose accept queue is full, so that a connect to it neither succeeds nor fails:
 * its process (a child) listens with a backlog of 1 and stops itself before it can accept, two
 * connections fill the queue, and the kernel then drops every further SYN.
 */
export async function fullBacklog(): Promise<{ port: number; close(): void }> {
  const code = `const s = require('node:net').createServer();
    s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      process.stdout.write(s.address().port + '\\n');
      process.kill(process.pid, 'SIGSTOP');
    });`;
  const child: ChildProcess = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = Number(line.toString().trim());
  const fillers: net.Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const s = net.connect(port, '127.0.0.1');
    await once(s, 'connect');
    fillers.push(s);
  }
  return {
    port,
    close() {
      for (const s of fillers) s.destroy();
      child.kill('SIGKILL');
    },
  };
}

/** A TCP check of 127.0.0.1 (unless the request says otherwise) with the reference's defaults. */
export function tcpCheck(
  request: Partial<TcpRequest> & Pick<TcpRequest, 'port'>,
  extra: Partial<TcpCheckDefinition> = {},
): TcpCheckDefinition {
  return {
    ...uptimeCheckBase('TCP', { id: 'check-1', accountId: 'acct-1', name: 'tcp' }, 3000, 5000),
    ...extra,
    request: { hostname: '127.0.0.1', data: null, ipFamily: 'IPv4', assertions: [], ...request },
  };
}
