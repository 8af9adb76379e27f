/**
 * Pings 127.0.0.1 once through a helper it never closes, prints the round-trip times and returns:
 * the test expects this process to exit by itself (an idle helper must not hold the event loop).
 * Usage: node icmp-helper-exit.ts <helper path>
 */
import { IcmpHelper } from '../../src/agent/checks/icmp/helper/client.ts';

const helper = new IcmpHelper({ path: process.argv[2] ?? '' });
process.stdout.write(`${JSON.stringify(await helper.ping({ address: '127.0.0.1', family: 4, count: 1 }))}\n`);
