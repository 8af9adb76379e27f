/**
 * TCP checks against blackbox_exporter's tcp_connect: connect to nginx's port on 127.0.0.1 and close
 * (no data sent, nothing asserted on the answer: both sides only connect).
 *
 *   npm run bench -- tcp [--concurrency 64] [--duration 10]
 */
import type { TcpCheckDefinition } from '../../src/shared/checks/types.ts';
import { compare, startBlackbox, startNginx } from './_blackbox.ts';
import { numberFlags } from './_stats.ts';
import { requireTools, TOOLS } from './_tools.ts';

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { concurrency: 64, duration: 10 });
  requireTools(TOOLS.nginx, TOOLS.blackbox, TOOLS.wrk);
  const nginx = await startNginx();
  const blackbox = await startBlackbox();
  const check: TcpCheckDefinition = {
    id: 'bench',
    accountId: 'bench',
    name: 'bench',
    checkType: 'TCP',
    shouldFail: false,
    runtimeId: null,
    degradedResponseTime: 3000,
    maxResponseTime: 5000,
    request: { hostname: '127.0.0.1', port: nginx.port, data: null, ipFamily: 'IPv4', assertions: [] },
  };
  try {
    return await compare({
      ...opts,
      workload: `TCP connect to 127.0.0.1:${nginx.port} (nginx), no data`,
      checkType: 'TCP',
      check,
      blackbox,
      module: 'tcp_connect',
      target: `127.0.0.1:${nginx.port}`,
      ratioTarget: 1.5,
    });
  } finally {
    await blackbox.stop();
    await nginx.stop();
  }
}
