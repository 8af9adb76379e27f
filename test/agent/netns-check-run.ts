/**
 * Runs one API, TCP or ICMP check with the real runner and prints its outcome as JSON: a netns test
 * starts this with `ip netns exec <ns>` so that the whole runner lives in the namespace the test built.
 * Usage: node netns-check-run.ts '<check definition JSON>'
 */
import pino from 'pino';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import { createIcmpCheckRunner } from '../../src/agent/checks/icmp.ts';
import type { CheckContext, CheckOutcome } from '../../src/agent/checks/runner.ts';
import { tcpCheckRunner } from '../../src/agent/checks/tcp.ts';
import type { CheckDefinition } from '../../src/shared/checks/types.ts';

const check = JSON.parse(process.argv[2] ?? '{}') as CheckDefinition;
const icmp = createIcmpCheckRunner();
const ctx: CheckContext = {
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  log: pino({ level: 'silent' }),
  useOsDnsResolver: false,
};
function run(): Promise<CheckOutcome> {
  switch (check.checkType) {
    case 'API':
      return apiCheckRunner.run(check, ctx);
    case 'TCP':
      return tcpCheckRunner.run(check, ctx);
    case 'ICMP':
      return icmp.run(check, ctx);
    default:
      throw new Error(`netns-check-run: no runner for ${check.checkType}`);
  }
}
const outcome = await run();
icmp.batcher.close();
process.stdout.write(`${JSON.stringify(outcome)}\n`);
