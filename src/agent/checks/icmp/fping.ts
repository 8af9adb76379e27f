/**
 * Echo requests for ICMP checks, sent by Debian's `fping` with many targets per process: the
 * agent's pinger when ICMP_HELPER_PATH does not name the persistent helper (helper/, which the
 * Docker images carry and which is faster: no process and no batch wait per check).
 *
 * Node has no ICMP socket API, and no well-kept native module offers Linux's unprivileged ICMP
 * datagram sockets, so without the helper the agent drives `fping` (which Debian installs with the
 * cap_net_raw file capability). One process pings many targets: checks that start close together are gathered into a
 * batch and share one `fping -C <count>` run, and spawns are spaced by at least `minSpacingMs`, so a
 * hundred concurrent ICMP checks cost a handful of processes, not a hundred (docs/checks.md, ICMP).
 *
 * Each check still sends its own echo requests: a target named by two checks appears twice on the
 * command line, and fping pings and reports each occurrence separately.
 */
import { type ChildProcess, spawn as nodeSpawn } from 'node:child_process';
import { IcmpUnavailableError, type Pinger, type PingRequest, type Spawn } from './pinger.ts';

export type { Spawn } from './pinger.ts';

export interface FpingOptions {
  /** Path or name of the fping binary (FPING_PATH in tests). */
  binary?: string;
  spawn?: Spawn;
  /** Time between two echo requests to one target (fping -p). */
  periodMs?: number;
  /** How long one echo request waits for its reply (fping -t); a later reply counts as lost. */
  replyTimeoutMs?: number;
  /** Least time between two fping spawns: bounds the process rate whatever the check rate. */
  minSpacingMs?: number;
  /** Most targets in one process; more pending requests wait for the next batch. */
  maxBatch?: number;
}

interface Pending extends PingRequest {
  resolve(rtts: Array<number | null>): void;
  reject(err: unknown): void;
  settled: boolean;
}

/** Defaults (documented in docs/checks.md): 10 pings take about 4.5 s; 50 fit in a 30 s run. */
export const FPING_DEFAULTS = { periodMs: 500, replyTimeoutMs: 500, minSpacingMs: 20, maxBatch: 512 } as const;

/** `127.0.0.1 : 0.03 0.04 -` — one summary line per target argument, in argument order (fping -C -q). */
const SUMMARY = /^(\S+)\s+:((?:\s+(?:\d+(?:\.\d+)?|-))+)\s*$/;

export function parseSummary(stderr: string): {
  lines: Array<{ target: string; rtts: Array<number | null> }>;
  other: string[];
} {
  const lines: Array<{ target: string; rtts: Array<number | null> }> = [];
  const other: string[] = [];
  for (const raw of stderr.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const m = SUMMARY.exec(line);
    if (!m) {
      other.push(line);
      continue;
    }
    const rtts = m[2]!
      .trim()
      .split(/\s+/)
      .map((v) => (v === '-' ? null : Number(v)));
    lines.push({ target: m[1]!, rtts });
  }
  return { lines, other };
}

/** Words for an fping that could not run at all, saying what the agent is missing. */
function unavailable(code: number | null, other: string[], spawnError?: NodeJS.ErrnoException): IcmpUnavailableError {
  if (spawnError?.code === 'ENOENT') {
    return new IcmpUnavailableError(
      'ICMP is not available on this agent: the fping binary is not installed (Debian package fping)',
    );
  }
  if (spawnError)
    return new IcmpUnavailableError(
      `ICMP is not available on this agent: fping could not start (${spawnError.message})`,
    );
  const said = other.join('; ').slice(0, 300);
  return new IcmpUnavailableError(
    `ICMP is not available on this agent: fping exited with code ${code}${said ? ` (${said})` : ''}; ` +
      'it needs the cap_net_raw file capability and NET_RAW in the container capability set',
  );
}

/** Gathers ping requests into batches and runs one fping per batch. */
export class FpingBatcher implements Pinger {
  readonly label = 'fping';
  readonly #binary: string;
  readonly #spawn: Spawn;
  readonly #periodMs: number;
  readonly #replyTimeoutMs: number;
  readonly #minSpacingMs: number;
  readonly #maxBatch: number;
  /** Requests waiting for a batch, by `family/count` (one fping run has one family and one count). */
  readonly #pending = new Map<string, Pending[]>();
  #flushTimer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  #lastSpawn = Number.NEGATIVE_INFINITY;
  readonly #running = new Set<ChildProcess>();
  /** Processes started so far (for tests and the benchmark). */
  spawned = 0;

  constructor(options: FpingOptions = {}) {
    this.#binary = options.binary ?? 'fping';
    this.#spawn = options.spawn ?? ((file, args) => nodeSpawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] }));
    this.#periodMs = options.periodMs ?? FPING_DEFAULTS.periodMs;
    this.#replyTimeoutMs = options.replyTimeoutMs ?? FPING_DEFAULTS.replyTimeoutMs;
    this.#minSpacingMs = options.minSpacingMs ?? FPING_DEFAULTS.minSpacingMs;
    this.#maxBatch = options.maxBatch ?? FPING_DEFAULTS.maxBatch;
  }

  /** Upper bound of one request's time in fping, for callers that budget a run. */
  expectedMs(count: number): number {
    return (count - 1) * this.#periodMs + this.#replyTimeoutMs + this.#minSpacingMs;
  }

  ping(req: PingRequest): Promise<Array<number | null>> {
    return new Promise((resolve, reject) => {
      if (req.signal?.aborted) {
        reject(req.signal.reason);
        return;
      }
      const entry: Pending = { ...req, resolve, reject, settled: false };
      req.signal?.addEventListener(
        'abort',
        () => {
          if (entry.settled) return;
          entry.settled = true;
          reject(req.signal?.reason);
        },
        { once: true },
      );
      const key = `${req.family}/${req.count}`;
      const list = this.#pending.get(key);
      if (list) list.push(entry);
      else this.#pending.set(key, [entry]);
      this.#scheduleFlush();
    });
  }

  close(): void {
    if (this.#flushTimer) {
      clearTimeout(this.#flushTimer as NodeJS.Timeout);
      clearImmediate(this.#flushTimer as NodeJS.Immediate);
      this.#flushTimer = null;
    }
    for (const child of this.#running) child.kill('SIGKILL');
  }

  #scheduleFlush(): void {
    if (this.#flushTimer) return;
    const wait = this.#lastSpawn + this.#minSpacingMs - performance.now();
    // setImmediate even when a spawn is allowed now, so that checks started in the same turn of
    // the event loop (a daemon filling its free slots) share the process.
    this.#flushTimer = wait > 0 ? setTimeout(() => this.#flush(), wait) : setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushTimer = null;
    // One spawn per flush keeps the process rate bounded; other families/counts go next time.
    for (const [key, list] of this.#pending) {
      const live = list.filter((e) => !e.settled);
      if (live.length === 0) {
        this.#pending.delete(key);
        continue;
      }
      const batch = live.slice(0, this.#maxBatch);
      const rest = live.slice(this.#maxBatch);
      if (rest.length > 0) this.#pending.set(key, rest);
      else this.#pending.delete(key);
      this.#run(batch);
      break;
    }
    if (this.#pending.size > 0) this.#scheduleFlush();
  }

  #run(batch: Pending[]): void {
    const first = batch[0]!;
    const args = [
      `-${first.family}`,
      '-C',
      String(first.count),
      '-q',
      '-p',
      String(this.#periodMs),
      '-t',
      String(this.#replyTimeoutMs),
      // Spacing between any two echo requests of the process; fping's default 10 ms would make a
      // batch of 500 targets take 5 s per round.
      '-i',
      '0.1',
      ...batch.map((e) => e.address),
    ];
    this.#lastSpawn = performance.now();
    this.spawned++;
    let child: ChildProcess;
    try {
      child = this.#spawn(this.#binary, args);
    } catch (err) {
      this.#settleAll(batch, unavailable(null, [], err as NodeJS.ErrnoException));
      return;
    }
    this.#running.add(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      // The summary is a line per target; cap what a misbehaving binary could make us hold.
      if (stderr.length < 1_000_000) stderr += chunk;
    });
    // Nobody waiting any more (every check cancelled): stop pinging.
    const onAbort = (): void => {
      if (batch.every((e) => e.settled)) child.kill('SIGTERM');
    };
    for (const e of batch) e.signal?.addEventListener('abort', onAbort, { once: true });
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError = err;
    });
    child.on('close', (code) => {
      this.#running.delete(child);
      for (const e of batch) e.signal?.removeEventListener('abort', onAbort);
      const { lines, other } = parseSummary(stderr);
      // 0: all answered, 1: some did not; anything else (2 names, 3 arguments, 4 system call) or a
      // missing summary means fping itself failed.
      if (spawnError || (code !== 0 && code !== 1) || lines.length !== batch.length) {
        if (code === null && !spawnError && batch.every((e) => e.settled)) return;
        this.#settleAll(batch, unavailable(code, other, spawnError));
        return;
      }
      batch.forEach((e, i) => {
        if (e.settled) return;
        e.settled = true;
        const rtts = lines[i]!.rtts;
        // Pad to the count asked for, should fping have printed fewer values.
        e.resolve(Array.from({ length: e.count }, (_, j) => rtts[j] ?? null));
      });
    });
  }

  #settleAll(batch: Pending[], err: Error): void {
    for (const e of batch) {
      if (e.settled) continue;
      e.settled = true;
      e.reject(err);
    }
  }
}
