/**
 * TCP checks against blackbox_exporter's tcp_connect: connect to nginx's port on 127.0.0.1 and close
 * (no data sent, nothing asserted on the answer: both sides only connect).
 *
 *   npm run bench -- tcp [--concurrency 64] [--duration 10]
 */
import { tcpCheck } from '../../test/agent/tcp-servers.ts';
import { compare, startBlackbox, startNginx } from './_blackbox.ts';
import { numberFlags } from './_stats.ts';
import { requireTools, TOOLS } from './_tools.ts';

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { concurrency: 64, duration: 10 });
  requireTools(TOOLS.nginx, TOOLS.blackbox, TOOLS.wrk);
  const nginx = await startNginx();
  const blackbox = await startBlackbox();
  // The tests' TCP check: connect to 127.0.0.1, no data, nothing asserted.
  const check = tcpCheck({ port: nginx.port }, { id: 'bench', accountId: 'bench', name: 'bench' });
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
