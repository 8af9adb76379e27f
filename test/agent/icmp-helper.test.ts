/**
 * The persistent ICMP helper (src/agent/checks/icmp/helper/): compiled from its C source, driven
 * through the real runner on loopback (many concurrent checks on one process, a helper killed and
 * started again) and inside network namespaces the test builds (a silent target among answering
 * ones; an unprivileged user with a datagram socket, with a raw socket from the file capability, and
 * with neither; capabilities gone once the sockets are open).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIcmpHelper } from '../../src/agent/checks/icmp/helper/build.ts';
import { IcmpHelper } from '../../src/agent/checks/icmp/helper/client.ts';
import type { Spawn } from '../../src/agent/checks/icmp/pinger.ts';
import { createIcmpCheckRunner, defaultPinger } from '../../src/agent/checks/icmp.ts';
import type { IcmpCheckResult } from '../../src/shared/checks/types.ts';
import { context } from './api-fixtures.ts';
import { addVethNamespaces, icmpCheck, netnsUnavailableReason, sh } from './icmp-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-icmp-helper-'));
// World-readable, so that the helper can be run as nobody below.
chmodSync(dir, 0o755);
const helperPath = buildIcmpHelper(join(dir, 'outpost-icmp'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const icmpResult = (o: { details?: Record<string, unknown> }) => o.details?.icmpCheckResult as IcmpCheckResult;

type KeepingSpawn = Spawn & { children: ChildProcess[]; stdout: string[] };

/** A spawn that keeps each child (to kill it or read its /proc status) and what it printed, optionally wrapped. */
function keepingSpawn(wrap: (file: string, args: readonly string[]) => string[] = (f, a) => [f, ...a]): KeepingSpawn {
  const children: ChildProcess[] = [];
  const stdout: string[] = [];
  const fn = ((file: string, args: readonly string[]) => {
    const [f, ...a] = wrap(file, args);
    const child = spawn(f!, a, { stdio: ['pipe', 'pipe', 'pipe'] });
    const i = children.push(child) - 1;
    stdout[i] = '';
    child.stdout?.on('data', (chunk: Buffer | string) => {
      stdout[i] += String(chunk);
    });
    return child;
  }) as KeepingSpawn;
  fn.children = children;
  fn.stdout = stdout;
  return fn;
}

const readyLine = (s: KeepingSpawn, i = 0): string | undefined => s.stdout[i]?.split('\n')[0];

describe('the agent picks its pinger from the environment', () => {
  it('ICMP_HELPER_PATH names the helper; without it, fping', () => {
    expect(defaultPinger({ ICMP_HELPER_PATH: helperPath }).label).toBe('the ICMP helper');
    expect(defaultPinger({}).label).toBe('fping');
  });

  it('a helper path that does not exist is a failed result naming the variable', async () => {
    const r = createIcmpCheckRunner({ batcher: new IcmpHelper({ path: join(dir, 'missing') }) });
    const o = await r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }, { shouldFail: true }), context());
    expect(o.hasFailures).toBe(true);
    expect(o.error).toBe(
      `ICMP is not available on this agent: the ICMP helper ${join(dir, 'missing')} (ICMP_HELPER_PATH) does not exist`,
    );
  });
});

describe('on loopback', () => {
  it('three hundred concurrent checks to fifty addresses: one process, each answered for its own address', async () => {
    const spawnFn = keepingSpawn();
    const r = createIcmpCheckRunner({ batcher: new IcmpHelper({ path: helperPath, spawn: spawnFn, periodMs: 20 }) });
    const addresses = Array.from({ length: 300 }, (_, i) => `127.0.0.${(i % 50) + 1}`);
    const outcomes = await Promise.all(
      addresses.map((hostname) => r.run(icmpCheck({ hostname, pingCount: 3 }), context())),
    );
    r.batcher.close();
    expect(outcomes.filter((o) => o.hasFailures).map((o) => o.error)).toEqual([]);
    expect(outcomes.map((o) => icmpResult(o).response?.resolvedIp)).toEqual(addresses);
    for (const o of outcomes) {
      const res = icmpResult(o).response!;
      expect(res.packetsReceived).toBe(3);
      expect(res.pings.every((p) => typeof p.rtt === 'number' && p.rtt > 0 && p.rtt < 1000)).toBe(true);
    }
    expect(spawnFn.children.length).toBe(1);
  });

  it('::1 over IPv6', async () => {
    const helper = new IcmpHelper({ path: helperPath, periodMs: 20 });
    try {
      const rtts = await helper.ping({ address: '::1', family: 6, count: 2 });
      expect(rtts).toHaveLength(2);
      expect(rtts.every((r) => typeof r === 'number')).toBe(true);
    } finally {
      helper.close();
    }
  });

  /** Resolves once the helper has printed `lines` lines (its ready line is the first). */
  const printed = (s: KeepingSpawn, lines: number): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if ((s.stdout[0] ?? '').split('\n').length > lines) resolve();
        else s.children[0]!.stdout!.once('data', () => setImmediate(check));
      };
      check();
    });

  it("a helper killed during a run fails that run as the agent's fault; the next run starts a new one", async () => {
    const spawnFn = keepingSpawn();
    const r = createIcmpCheckRunner({ batcher: new IcmpHelper({ path: helperPath, spawn: spawnFn, periodMs: 200 }) });
    const first = r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 10 }, { shouldFail: true }), context());
    // Ready, the loopback probe's reply, the run's first reply: the run is under way.
    await printed(spawnFn, 3);
    spawnFn.children[0]!.kill('SIGKILL');
    const o = await first;
    expect(o.hasFailures).toBe(true);
    expect(o.error).toBe(`ICMP is not available on this agent: the ICMP helper ${helperPath} was stopped by SIGKILL`);
    expect(o.details?.icmpUnavailable).toBe(true);

    const again = await r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 2 }), context());
    r.batcher.close();
    expect(again.error).toBeNull();
    expect(icmpResult(again).response?.packetsReceived).toBe(2);
    expect(spawnFn.children.length).toBe(2);
  });

  it('a helper killed under the loopback probe is not remembered as an agent that cannot ping', async () => {
    const spawnFn = keepingSpawn();
    const r = createIcmpCheckRunner({ batcher: new IcmpHelper({ path: helperPath, spawn: spawnFn }) });
    const first = r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }), context());
    await printed(spawnFn, 1);
    spawnFn.children[0]!.kill('SIGKILL');
    expect((await first).error).toMatch(/the ICMP helper .* was stopped by SIGKILL$/);
    const again = await r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }), context());
    r.batcher.close();
    expect(again.error).toBeNull();
  });

  it('cancelled while pinging: a cancelled result, promptly', async () => {
    const r = createIcmpCheckRunner({ batcher: new IcmpHelper({ path: helperPath, periodMs: 1000 }) });
    const ac = new AbortController();
    const p = r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 10 }), context({ signal: ac.signal }));
    setTimeout(() => ac.abort(), 300);
    const t0 = performance.now();
    const o = await p;
    r.batcher.close();
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(o.error).toBe('cancelled');
  });

  it('an agent whose helper is idle exits by itself: the helper holds the event loop only while echo requests are out', () => {
    const out = execFileSync(process.execPath, [join(import.meta.dirname, 'icmp-helper-exit.ts'), helperPath], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(JSON.parse(out)).toEqual([expect.any(Number)]);
  });

  it('a malformed request line stops the helper with exit code 2 and says why', () => {
    const out = (() => {
      try {
        return execFileSync(helperPath, ['500'], {
          input: '1 5 127.0.0.1\n',
          encoding: 'utf8',
          stdio: ['pipe', 'pipe', 'pipe'],
        });
      } catch (err) {
        return err as { status: number; stderr: string };
      }
    })();
    expect(out).toMatchObject({ status: 2, stderr: 'outpost-icmp: malformed request line\n' });
  });
});

describe('in network namespaces', () => {
  const reason = netnsUnavailableReason();
  const ns = { a: `ophelpA${process.pid}`, b: `ophelpB${process.pid}` };
  const capped = join(dir, 'outpost-icmp-cap');
  /** The helper run inside namespace A, optionally as nobody (no capabilities unless the file has one). */
  const inNs = (asNobody: boolean) =>
    keepingSpawn((file, args) => [
      'ip',
      'netns',
      'exec',
      ns.a,
      ...(asNobody ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []),
      file,
      ...args,
    ]);
  const pingGroupRange = (range: string) =>
    sh('ip', ['netns', 'exec', ns.a, 'sysctl', '-qw', `net.ipv4.ping_group_range=${range}`]);

  beforeAll(() => {
    if (reason) return;
    addVethNamespaces(ns, 'ohv');
    copyFileSync(helperPath, capped);
    chmodSync(capped, 0o755);
    sh('setcap', ['cap_net_raw=ep', capped]);
  });
  afterAll(() => {
    if (reason) return;
    for (const n of [ns.a, ns.b]) execFileSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
  });

  it('a target that stops answering times out while the others, pinged at the same time, answer', async (t) => {
    if (reason) t.skip(reason);
    const helper = new IcmpHelper({ path: helperPath, spawn: inNs(false), periodMs: 20, replyTimeoutMs: 300 });
    try {
      expect(await helper.ping({ address: '192.0.2.2', family: 4, count: 2 })).toEqual([
        expect.any(Number),
        expect.any(Number),
      ]);
      sh('ip', ['netns', 'exec', ns.b, 'sysctl', '-qw', 'net.ipv4.icmp_echo_ignore_all=1']);
      const targets = Array.from({ length: 60 }, (_, i) =>
        i % 3 === 0 ? '192.0.2.2' : i % 3 === 1 ? '192.0.2.1' : '127.0.0.1',
      );
      const t0 = performance.now();
      const results = await Promise.all(targets.map((address) => helper.ping({ address, family: 4, count: 3 })));
      results.forEach((rtts, i) => {
        if (targets[i] === '192.0.2.2') expect(rtts).toEqual([null, null, null]);
        else expect(rtts.every((r) => typeof r === 'number' && r < 300)).toBe(true);
      });
      // Three echo requests 20 ms apart, the last one waiting its 300 ms: not a serial wait per target.
      expect(performance.now() - t0).toBeLessThan(2000);
    } finally {
      sh('ip', ['netns', 'exec', ns.b, 'sysctl', '-qw', 'net.ipv4.icmp_echo_ignore_all=0']);
      helper.close();
    }
  });

  it('unprivileged, where ping_group_range allows: datagram sockets, no capability at all', async (t) => {
    if (reason) t.skip(reason);
    pingGroupRange('0 2147483647');
    const spawnFn = inNs(true);
    const r = createIcmpCheckRunner({ batcher: new IcmpHelper({ path: helperPath, spawn: spawnFn, periodMs: 20 }) });
    try {
      const o = await r.run(icmpCheck({ hostname: '192.0.2.2', pingCount: 2 }), context());
      expect(o.error).toBeNull();
      expect(icmpResult(o).response?.packetsReceived).toBe(2);
      expect(readyLine(spawnFn)).toBe('ready v4=dgram v6=dgram');
    } finally {
      r.batcher.close();
      pingGroupRange('1 0');
    }
  });

  it('unprivileged with the cap_net_raw file capability: raw sockets, then every capability dropped', async (t) => {
    if (reason) t.skip(reason);
    const spawnFn = inNs(true);
    const helper = new IcmpHelper({ path: capped, spawn: spawnFn, periodMs: 20 });
    try {
      expect(await helper.ping({ address: '192.0.2.2', family: 4, count: 1 })).toEqual([expect.any(Number)]);
      const child = spawnFn.children[0]!;
      expect(readyLine(spawnFn)).toBe('ready v4=raw v6=raw');
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      expect(status).toMatch(/^CapPrm:\s+0+$/m);
      expect(status).toMatch(/^CapEff:\s+0+$/m);
      expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    } finally {
      helper.close();
    }
  });

  it('unprivileged with neither: a failed result naming ping_group_range and the capability', async (t) => {
    if (reason) t.skip(reason);
    const r = createIcmpCheckRunner({ batcher: new IcmpHelper({ path: helperPath, spawn: inNs(true) }) });
    const o = await r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }, { shouldFail: true }), context());
    r.batcher.close();
    expect(o.hasFailures).toBe(true);
    expect(o.error).toBe(
      'ICMP is not available on this agent for IPv4: the ICMP helper could not open a socket (datagram socket: EACCES, ' +
        "net.ipv4.ping_group_range must include the agent's group; raw socket: EPERM, it needs the cap_net_raw file " +
        'capability and NET_RAW in the container capability set)',
    );
  });
});
