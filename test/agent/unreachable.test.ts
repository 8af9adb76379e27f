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

interface NoRouteCase {
  name: string;
  api: { url: string; error: string };
  tcp: { hostname: string; port: number; error: string };
  /** Absent: the case is not asked of ICMP. */
  icmp?: { hostname: string; error: string };
}

const cases: NoRouteCase[] = [
  {
    name: 'a blackhole route (connect EINVAL) is "network unreachable", not "connect EINVAL … - Local (0.0.0.0:0)"',
    api: {
      url: 'http://198.51.100.7:8080/',
      error:
        'Network unreachable: this agent has no route to 198.51.100.7 (198.51.100.7:8080: no route to the network)',
    },
    tcp: {
      hostname: '198.51.100.7',
      port: 5432,
      error:
        'Network unreachable: this agent has no route to 198.51.100.7 (198.51.100.7:5432: no route to the network)',
    },
    icmp: {
      hostname: '198.51.100.7',
      error: 'Network unreachable: this agent has no route to 198.51.100.7 (198.51.100.7: no route to the network)',
    },
  },
  {
    name: 'no route at all (ENETUNREACH) reads the same',
    api: {
      url: 'https://203.0.113.7/',
      error: 'Network unreachable: this agent has no route to 203.0.113.7 (203.0.113.7:443: no route to the network)',
    },
    tcp: {
      hostname: '203.0.113.7',
      port: 22,
      error: 'Network unreachable: this agent has no route to 203.0.113.7 (203.0.113.7:22: no route to the network)',
    },
  },
  {
    name: 'an unreachable route (EHOSTUNREACH) is "host unreachable" in the same form',
    api: {
      url: 'http://192.0.2.9/',
      error: 'Host unreachable: this agent has no route to 192.0.2.9 (192.0.2.9:80: no route to the host)',
    },
    tcp: {
      hostname: '192.0.2.9',
      port: 25,
      error: 'Host unreachable: this agent has no route to 192.0.2.9 (192.0.2.9:25: no route to the host)',
    },
    icmp: {
      hostname: '192.0.2.9',
      error: 'Host unreachable: this agent has no route to 192.0.2.9 (192.0.2.9: no route to the host)',
    },
  },
];

describe('no route to the target: one wording for API, TCP and ICMP', () => {
  it.for(cases)('$name', ({ api, tcp, icmp }, t) => {
    if (reason) t.skip(reason);
    const apiOutcome = runIn(apiCheck({ url: api.url }));
    expect(apiOutcome.hasFailures).toBe(true);
    expect(apiOutcome.error).toBe(api.error);
    expect(runIn(tcpCheck({ hostname: tcp.hostname, port: tcp.port })).error).toBe(tcp.error);
    if (icmp) expect(runIn(icmpCheck({ hostname: icmp.hostname, pingCount: 1 })).error).toBe(icmp.error);
  });
});
