/**
 * The TCP check runner against nginx (HTTP over a raw TCP exchange) and node:net servers on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckContext } from '../../src/agent/checks/runner.ts';
import { TCP_READ_QUIET_MS, TCP_RESPONSE_CAP_BYTES, tcpCheckRunner } from '../../src/agent/checks/tcp.ts';
import type { TcpAssertion, TcpCheckDefinition, TcpCheckResult } from '../../src/shared/checks/types.ts';
import { context } from './api-fixtures.ts';
import { freePort } from './dns-server.ts';
import { type NetServer, type NginxServer, startNetServer, startNginx, tcpCheck } from './tcp-servers.ts';

let nginx: NginxServer;
let echo: NetServer;
beforeAll(async () => {
  nginx = await startNginx();
  echo = await startNetServer((socket) => socket.pipe(socket));
});
afterAll(async () => {
  await Promise.all([nginx?.stop(), echo?.close()]);
});

async function run(check: TcpCheckDefinition, ctx: Partial<CheckContext> = {}) {
  const outcome = await tcpCheckRunner.run(check, context(ctx));
  const result = outcome.details?.tcpCheckResult as TcpCheckResult;
  return { outcome, result, response: result.response };
}

const a = (
  source: TcpAssertion['source'],
  comparison: TcpAssertion['comparison'],
  target: string,
  regex: string | null = null,
): TcpAssertion => ({
  source,
  comparison,
  property: '',
  target,
  regex,
});

describe('TCP check runner', () => {
  it('sends data to nginx and asserts on its answer, read until nginx closes', async () => {
    const { outcome, response, result } = await run(
      tcpCheck({
        port: nginx.port,
        data: 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n',
        assertions: [
          a('RESPONSE_DATA', 'CONTAINS', 'HTTP/1.1 200 OK'),
          a('RESPONSE_DATA', 'CONTAINS', 'hello from nginx'),
          a('RESPONSE_DATA', 'EQUALS', 'nginx', 'Server: (\\w+)'),
          a('RESPONSE_DATA', 'NOT_CONTAINS', '500 Internal'),
          a('RESPONSE_TIME', 'LESS_THAN', '2000'),
        ],
      }),
    );
    expect(outcome.error).toBeNull();
    expect(result.assertions.every((x) => x.passed)).toBe(true);
    expect(response).toMatchObject({
      remoteAddress: '127.0.0.1',
      remotePort: nginx.port,
      family: 'IPv4',
      dataTruncated: false,
    });
    const { dns, connect, data, total } = response!.timingPhases;
    expect(total).toBeGreaterThanOrEqual(dns + connect + data - 0.01);
    expect(connect).toBeGreaterThan(0);
    // nginx closed the connection, so the read ended there and not after a quiet period.
    expect(response!.timingPhases.data).toBeLessThan(TCP_READ_QUIET_MS);
    expect(outcome.responseTime).toBe(response?.timingPhases.total);
  });

  it('only connects when there is nothing to send and nothing to assert on the data', async () => {
    const { outcome, response } = await run(tcpCheck({ port: nginx.port }));
    expect([outcome.hasFailures, outcome.error]).toEqual([false, null]);
    expect(response).toMatchObject({ data: '', bytesReceived: 0 });
    expect(response?.timingPhases.data).toBe(0);
  });

  it('reads an echo, with every comparison of the reference', async () => {
    const { result, outcome } = await run(
      tcpCheck({
        port: echo.port,
        data: 'ping 42\n',
        assertions: [
          a('RESPONSE_DATA', 'EQUALS', 'ping 42\n'),
          a('RESPONSE_DATA', 'NOT_EQUALS', 'pong'),
          a('RESPONSE_DATA', 'NOT_EMPTY', ''),
          a('RESPONSE_DATA', 'IS_EMPTY', ''),
          a('RESPONSE_DATA', 'GREATER_THAN', '41', 'ping (\\d+)'),
          a('RESPONSE_DATA', 'LESS_THAN', '43', 'ping (\\d+)'),
          a('RESPONSE_DATA', 'CONTAINS', 'ping'),
          a('RESPONSE_DATA', 'NOT_CONTAINS', 'pong'),
        ],
      }),
    );
    expect(result.assertions.map((x) => x.passed)).toEqual([true, true, true, false, true, true, true, true]);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toBe('Assertion failed: RESPONSE_DATA IS_EMPTY (actual: "ping 42\\n")');
  });

  it('reads a banner the server sends first, ending the data phase at its last byte', async () => {
    const banner = await startNetServer((socket) => socket.write('220 smtp.example.test ESMTP ready\r\n'));
    try {
      const { outcome, response } = await run(
        tcpCheck({ port: banner.port, assertions: [a('RESPONSE_DATA', 'CONTAINS', '220 ')] }),
      );
      expect(outcome.error).toBeNull();
      expect(response?.data).toBe('220 smtp.example.test ESMTP ready\r\n');
      expect(response!.timingPhases.data).toBeLessThan(TCP_READ_QUIET_MS);
    } finally {
      await banner.close();
    }
  });

  it('stops reading at the cap and says the answer was cut', async () => {
    const flood = await startNetServer((socket) => socket.write(Buffer.alloc(TCP_RESPONSE_CAP_BYTES * 2, 'x')));
    try {
      const { response } = await run(tcpCheck({ port: flood.port, assertions: [a('RESPONSE_DATA', 'NOT_EMPTY', '')] }));
      expect(response).toMatchObject({ dataTruncated: true, bytesReceived: TCP_RESPONSE_CAP_BYTES });
    } finally {
      await flood.close();
    }
  });

  it('says the connection was refused by a closed port', async () => {
    const port = await freePort();
    const { outcome, response } = await run(tcpCheck({ port }));
    expect([outcome.hasFailures, response]).toEqual([true, null]);
    expect(outcome.error).toBe(`Connection refused by 127.0.0.1:${port}`);
  });

  it('gives up on a silent server at maxResponseTime and fails on time', async () => {
    const silent = await startNetServer(() => {});
    try {
      const { outcome, response } = await run(
        tcpCheck({ port: silent.port, data: 'hello?\n' }, { maxResponseTime: 150, degradedResponseTime: 100 }),
      );
      expect(response?.data).toBe('');
      expect(outcome.overMaxResponseTime).toBe(true);
      expect(outcome.error).toMatch(/^Response time 1\d\d ms is over the maximum of 150 ms$/);
    } finally {
      await silent.close();
    }
  });

  it('fails on time every time, although timers may fire early by the clock response times use', async () => {
    // libuv's timers run on a coarse clock (up to a jiffy behind performance.now()), so a wait of
    // exactly the rest of maxResponseTime ended a few runs a millisecond short of it.
    const silent = await startNetServer(() => {});
    try {
      for (let i = 0; i < 50; i++) {
        const { outcome } = await run(tcpCheck({ port: silent.port, data: 'x' }, { maxResponseTime: 5 }));
        expect([outcome.overMaxResponseTime, outcome.responseTime > 5]).toEqual([true, true]);
      }
    } finally {
      await silent.close();
    }
  });

  it('names the run timeout and the step it interrupted', async () => {
    const silent = await startNetServer(() => {});
    try {
      const { outcome } = await run(tcpCheck({ port: silent.port, data: 'x' }, { maxResponseTime: 0 }), {
        timeoutMs: 200,
      });
      expect(outcome.error).toBe('Timed out after 200 ms while waiting for the response');
    } finally {
      await silent.close();
    }
  });

  it('reports a reset before any answer as such', async () => {
    const rude = await startNetServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    try {
      const { outcome } = await run(tcpCheck({ port: rude.port, data: 'hi\n' }));
      expect(outcome.error).toBe('Connection reset');
    } finally {
      await rude.close();
    }
  });

  it('stops when cancelled and says so', async () => {
    const silent = await startNetServer(() => {});
    const controller = new AbortController();
    try {
      const pending = run(tcpCheck({ port: silent.port, data: 'x' }), { signal: controller.signal });
      setImmediate(() => controller.abort('cancelled'));
      const { outcome } = await pending;
      expect(outcome.error).toBe('cancelled');
    } finally {
      await silent.close();
    }
  });

  it('falls back to IPv4 when the name has no IPv6 address (OS resolver), and connects to ::1 when asked', async () => {
    const v4 = await run(tcpCheck({ hostname: 'localhost', port: echo.port, ipFamily: 'IPv6' }), {
      useOsDnsResolver: true,
    });
    expect(v4.outcome.error).toBeNull();
    expect(v4.response).toMatchObject({ remoteAddress: '127.0.0.1', family: 'IPv4' });
    expect(v4.outcome.details?.resolvedVia).toBe('lookup');

    const echo6 = await startNetServer((socket) => socket.pipe(socket), '::1');
    try {
      const v6 = await run(
        tcpCheck({
          hostname: '::1',
          port: echo6.port,
          ipFamily: 'IPv6',
          data: 'six',
          assertions: [a('RESPONSE_DATA', 'EQUALS', 'six')],
        }),
      );
      expect(v6.outcome.error).toBeNull();
      expect(v6.response).toMatchObject({ remoteAddress: '::1', family: 'IPv6' });
    } finally {
      await echo6.close();
    }
  });

  it('RESPONSE_DATA: a regular expression in property picks its first capture group, as TEXT_BODY does', async () => {
    const banner = await startNetServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n'));
    try {
      const assertions: TcpAssertion[] = [
        { source: 'RESPONSE_DATA', property: 'SSH-([\\d.]+)-', comparison: 'EQUALS', target: '2.0', regex: null },
        { source: 'RESPONSE_DATA', property: 'OpenSSH_(\\S+)', comparison: 'EQUALS', target: '9', regex: '^(\\d+)' },
      ];
      const { outcome, result } = await run(tcpCheck({ port: banner.port, assertions }));
      expect(result.assertions.map((x) => [x.actual, x.passed])).toEqual([
        ['2.0', true],
        ['9', true],
      ]);
      expect(outcome.hasFailures).toBe(false);
    } finally {
      await banner.close();
    }
  });

  // The reference: shouldFail treats connection failures (timeouts, refused ports) as passed;
  // successful connections still pass; only failed assertions fail the check.
  it('shouldFail: a refused port passes, and details say what was excused', async () => {
    const port = await freePort();
    const { outcome } = await run(tcpCheck({ port }, { shouldFail: true }));
    expect([outcome.hasFailures, outcome.error]).toEqual([false, null]);
    expect(outcome.details?.shouldFail).toEqual({ excused: `Connection refused by 127.0.0.1:${port}` });
  });

  it('shouldFail: a successful connection still passes', async () => {
    const { outcome } = await run(tcpCheck({ port: echo.port }, { shouldFail: true }));
    expect([outcome.hasFailures, outcome.error]).toEqual([false, null]);
    expect(outcome.details?.shouldFail).toBeUndefined();
  });

  it('shouldFail: a failed assertion on an answer still fails', async () => {
    const { outcome } = await run(
      tcpCheck(
        { port: echo.port, data: 'ping', assertions: [a('RESPONSE_DATA', 'EQUALS', 'pong')] },
        { shouldFail: true },
      ),
    );
    expect([outcome.hasFailures, outcome.error]).toEqual([
      true,
      'Assertion failed: RESPONSE_DATA EQUALS "pong" (actual: "ping")',
    ]);
  });
});
