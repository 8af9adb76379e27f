/**
 * An address this agent has no route to is worded the same way by API, TCP and ICMP checks
 * ("Network unreachable: this agent has no route to …"), whichever errno the kernel gives: a network
 * without a route (ENETUNREACH), a blackhole route (EINVAL), an `unreachable` route (EHOSTUNREACH).
 * The runners run in a network namespace this file builds, with such routes and nothing else.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheck } from './api-fixtures.ts';
import { icmpCheck, netnsUnavailableReason, sh } from './icmp-fixtures.ts';
import { tcpCheck } from './tcp-servers.ts';

const reason = netnsUnavailableReason();
const ns = `opunreach${process.pid}`;

function runIn(def: object): { hasFailures: boolean; error: string | null } {
  return JSON.parse(
    sh('ip', [
      'netns',
      'exec',
      ns,
      process.execPath,
      join(import.meta.dirname, 'netns-check-run.ts'),
      JSON.stringify(def),
    ]),
  );
}

beforeAll(() => {
  if (reason) return;
  sh('ip', ['netns', 'add', ns]);
  sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  // TEST-NET ranges: one dropped by a blackhole route, one with an `unreachable` route; others have no route.
  sh('ip', ['-n', ns, 'route', 'add', 'blackhole', '198.51.100.0/24']);
  sh('ip', ['-n', ns, 'route', 'add', 'unreachable', '192.0.2.0/24']);
});
afterAll(() => {
  if (!reason) execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
});

describe('no route to the target: one wording for API, TCP and ICMP', () => {
  it('a blackhole route (connect EINVAL) is "network unreachable", not "connect EINVAL … - Local (0.0.0.0:0)"', (t) => {
    if (reason) t.skip(reason);
    const api = runIn(apiCheck({ url: 'http://198.51.100.7:8080/' }));
    expect(api.hasFailures).toBe(true);
    expect(api.error).toBe(
      'Network unreachable: this agent has no route to 198.51.100.7 (198.51.100.7:8080: no route to the network)',
    );
    const tcp = runIn(tcpCheck({ hostname: '198.51.100.7', port: 5432 }));
    expect(tcp.error).toBe(
      'Network unreachable: this agent has no route to 198.51.100.7 (198.51.100.7:5432: no route to the network)',
    );
    const icmp = runIn(icmpCheck({ hostname: '198.51.100.7', pingCount: 1 }));
    expect(icmp.error).toBe(
      'Network unreachable: this agent has no route to 198.51.100.7 (198.51.100.7: no route to the network)',
    );
  });

  it('no route at all (ENETUNREACH) reads the same', (t) => {
    if (reason) t.skip(reason);
    const api = runIn(apiCheck({ url: 'https://203.0.113.7/' }));
    expect(api.error).toBe(
      'Network unreachable: this agent has no route to 203.0.113.7 (203.0.113.7:443: no route to the network)',
    );
    const tcp = runIn(tcpCheck({ hostname: '203.0.113.7', port: 22 }));
    expect(tcp.error).toBe(
      'Network unreachable: this agent has no route to 203.0.113.7 (203.0.113.7:22: no route to the network)',
    );
  });

  it('an unreachable route (EHOSTUNREACH) is "host unreachable" in the same form', (t) => {
    if (reason) t.skip(reason);
    const api = runIn(apiCheck({ url: 'http://192.0.2.9/' }));
    expect(api.error).toBe(
      'Host unreachable: this agent has no route to 192.0.2.9 (192.0.2.9:80: no route to the host)',
    );
    const tcp = runIn(tcpCheck({ hostname: '192.0.2.9', port: 25 }));
    expect(tcp.error).toBe(
      'Host unreachable: this agent has no route to 192.0.2.9 (192.0.2.9:25: no route to the host)',
    );
    const icmp = runIn(icmpCheck({ hostname: '192.0.2.9', pingCount: 1 }));
    expect(icmp.error).toBe('Host unreachable: this agent has no route to 192.0.2.9 (192.0.2.9: no route to the host)');
  });
});
