/**
 * API checks against blackbox_exporter's http_2xx: GET http://127.0.0.1:<nginx>/ (a small JSON
 * answer), every run on a fresh connection on both sides, at the same concurrency.
 *
 *   npm run bench -- api [--concurrency 64] [--duration 10]
 */
import type { ApiCheckDefinition } from '../../src/shared/checks/types.ts';
import { apiRequest } from '../../test/support/accounts-check-bodies.ts';
import { compare, startBlackbox, startNginx } from './_blackbox.ts';
import { numberFlags } from './_stats.ts';
import { requireTools, TOOLS } from './_tools.ts';

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { concurrency: 64, duration: 10 });
  requireTools(TOOLS.nginx, TOOLS.blackbox, TOOLS.wrk);
  const nginx = await startNginx();
  const blackbox = await startBlackbox();
  const url = `http://127.0.0.1:${nginx.port}/`;
  const check: ApiCheckDefinition = {
    id: 'bench',
    accountId: 'bench',
    name: 'bench',
    checkType: 'API',
    shouldFail: false,
    runtimeId: null,
    degradedResponseTime: 5000,
    maxResponseTime: 20000,
    request: apiRequest({
      url,
      // blackbox's http_2xx asserts the status; so does the agent's check.
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
    }),
  };
  try {
    return await compare({
      ...opts,
      workload: `GET ${url} (nginx, 200 {"ok":true}), status asserted`,
      checkType: 'API',
      check,
      blackbox,
      module: 'http_2xx',
      target: url,
      ratioTarget: 1.5,
    });
  } finally {
    await blackbox.stop();
    await nginx.stop();
  }
}
