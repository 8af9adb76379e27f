/**
 * When an API check's time limit fires, the phase that was running carries the time: a connect that
 * never completes is `tcp`, a TLS handshake that never ends is `tls`, a server that accepts but never
 * answers is `firstByte`, a body that stalls is `download` — not `wait`.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import type { TimingPhases } from '../../src/shared/checks/types.ts';
import { apiCheck, context, startServer, type TestServer } from './api-fixtures.ts';
import { fullBacklog } from './tcp-servers.ts';

// Long enough that a loaded CI machine's late server (firstByte of 260 ms seen at 500) leaves the stalled
// phase most of the run.
const TIMEOUT_MS = 1000;
const PHASES = ['wait', 'dns', 'tcp', 'tls', 'firstByte', 'download'] as const;

let plain: TestServer;
beforeAll(async () => {
  plain = await startServer();
});
afterAll(async () => {
  await plain?.close();
});

/** The run's phases (in details when no response came, else in the response). */
function phasesOf(r: Awaited<ReturnType<typeof apiCheckRunner.run>>): TimingPhases {
  return (r.apiCheckResult?.response?.timingPhases ?? r.details?.timingPhases) as TimingPhases;
}

/**
 * The phase that carries the time: at least half the run is in it (wrongly charged, it was all in `wait`),
 * `wait` (agent-side time, which a loaded machine stretches a little) is a small part, and the phases
 * after it are 0.
 */
function expectTimeIn(p: TimingPhases, phase: (typeof PHASES)[number]): void {
  const at = PHASES.indexOf(phase);
  expect(p.total, JSON.stringify(p)).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  expect(p[phase], JSON.stringify(p)).toBeGreaterThanOrEqual(p.total * 0.5);
  expect(p.wait, JSON.stringify(p)).toBeLessThan(p.total * 0.25);
  for (const later of PHASES.slice(at + 1)) expect(p[later], `${later} in ${JSON.stringify(p)}`).toBe(0);
}

describe('a timeout is charged to the phase that was running', () => {
  it('connect: a SYN nobody answers is tcp time', async () => {
    const full = await fullBacklog();
    try {
      const r = await apiCheckRunner.run(
        apiCheck({ url: `http://127.0.0.1:${full.port}/` }),
        context({ timeoutMs: TIMEOUT_MS }),
      );
      expect(r.error).toBe(`Timed out after ${TIMEOUT_MS} ms while connecting`);
      expectTimeIn(phasesOf(r), 'tcp');
    } finally {
      full.close();
    }
  });

  it('TLS: a server that accepts but never answers the ClientHello is tls time', async () => {
    // It reads (and drops) what comes, so that it sees the client close and can itself be closed.
    const mute = net.createServer((socket) => socket.resume());
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    const { port } = mute.address() as net.AddressInfo;
    try {
      const r = await apiCheckRunner.run(
        apiCheck({ url: `https://127.0.0.1:${port}/` }),
        context({ timeoutMs: TIMEOUT_MS }),
      );
      expect(r.error).toBe(`Timed out after ${TIMEOUT_MS} ms while in the TLS handshake`);
      expectTimeIn(phasesOf(r), 'tls');
    } finally {
      await new Promise((r) => mute.close(r));
    }
  });

  it('headers: a server that takes the request and never answers is firstByte time', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${plain.origin}/hang` }), context({ timeoutMs: TIMEOUT_MS }));
    expect(r.error).toBe(`Timed out after ${TIMEOUT_MS} ms while waiting for the response`);
    expectTimeIn(phasesOf(r), 'firstByte');
  });

  it('body: headers and part of the body, then silence, is download time', async () => {
    const r = await apiCheckRunner.run(
      apiCheck({ url: `${plain.origin}/partial` }),
      context({ timeoutMs: TIMEOUT_MS }),
    );
    expect(r.error).toBe(`Timed out after ${TIMEOUT_MS} ms while reading the response body`);
    expectTimeIn(phasesOf(r), 'download');
  });

  it('the cumulative timings list only events that happened', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${plain.origin}/hang` }), context({ timeoutMs: TIMEOUT_MS }));
    expect(Object.keys(r.details?.timings as object)).toEqual(['start', 'socket', 'lookup', 'connect']);
  });
});
