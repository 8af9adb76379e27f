/**
 * Runs one ICMP check with the real runner and prints its outcome as JSON: the netns test starts
 * this with `ip netns exec <ns>` so that the whole runner (route lookup, fping) lives in the
 * namespace the test built. Usage: node icmp-netns-run.ts '<check definition JSON>' [useOsDnsResolver]
 */
import pino from 'pino';
import { createIcmpCheckRunner } from '../../src/agent/checks/icmp.ts';
import type { IcmpCheckDefinition } from '../../src/shared/checks/types.ts';

const check = JSON.parse(process.argv[2] ?? '{}') as IcmpCheckDefinition;
const runner = createIcmpCheckRunner();
const outcome = await runner.run(check, {
  signal: new AbortController().signal,
  timeoutMs: 20_000,
  log: pino({ level: 'silent' }),
  useOsDnsResolver: process.argv[3] === 'true',
});
process.stdout.write(`${JSON.stringify(outcome)}\n`);
