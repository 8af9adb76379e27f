/**
 * The warm pool and the one door to a sandbox. Per runtime it keeps `size` sandboxes started and
 * ready (Node loaded with its flags, the bootstrap waiting on stdin, the job folder made), so a
 * scripted check pays no cold start. A sandbox leaves the pool for exactly one job and is never
 * returned; the pool refills in the background, once that job ends (at once if it took the last
 * warm one). The permission model's paths are fixed when Node starts, which is why each warm
 * sandbox comes with its own job folder already made. The agent does not fill the pool at start:
 * the first acquire() starts its sandbox cold and the pool's refill behind it, so an agent whose
 * checks run no user code keeps no sandbox processes.
 *
 * Start failures are the agent's fault: acquire() tries a second, fresh sandbox and then throws
 * SandboxStartError, which runners report as an agent error (hasErrors, not hasFailures).
 */
import { byNewest, type Runtime } from '../runtimes.ts';
import { RuntimeUnavailableError, SandboxStartError } from './errors.ts';
import { NO_ISOLATION, type SandboxIsolation } from './isolation.ts';
import type { SandboxProcess } from './process.ts';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './types.ts';
import type { Log } from '../../shared/log.ts';

export interface SandboxPoolOptions {
  runtimes: readonly Runtime[];
  /** Warm sandboxes kept per runtime (SANDBOX_POOL_SIZE); 0 starts each sandbox on demand. */
  size: number;
  limits?: Partial<SandboxLimits>;
  log?: Log;
  jobsRoot?: string;
  /** Tests start a different program to simulate a broken runtime. */
  bootstrapPath?: string;
  /** How sandboxes are kept apart from the agent and each other (./isolation.ts, detectIsolation). */
  isolation?: SandboxIsolation;
}

export interface SandboxCounts {
  runtime: string;
  idle: number;
  busy: number;
  starting: number;
}

/** After a warm sandbox failed to start, the pool waits this long before trying that runtime again. */
const REFILL_PAUSE_MS = 30_000;

export class SandboxPool {
  readonly limits: SandboxLimits;
  /** Shared with the browser engine, which starts its sandboxes itself: one uid range for all. */
  readonly isolation: SandboxIsolation;
  readonly #runtimes: Map<string, Runtime>;
  readonly #size: number;
  readonly #log: SandboxPoolOptions['log'];
  readonly #jobsRoot: string | undefined;
  readonly #bootstrapPath: string | undefined;
  readonly #warm = new Map<string, SandboxProcess[]>();
  readonly #starting = new Map<string, number>();
  readonly #pausedUntil = new Map<string, number>();
  readonly #inUse = new Set<SandboxProcess>();
  /** Warm sandboxes being started: close() waits for them so none is left behind. */
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;

  constructor(opts: SandboxPoolOptions) {
    this.#runtimes = new Map([...opts.runtimes].sort(byNewest).map((r) => [r.id, r]));
    this.#size = Math.max(0, Math.floor(opts.size));
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...opts.limits };
    this.#log = opts.log;
    this.#jobsRoot = opts.jobsRoot;
    this.#bootstrapPath = opts.bootstrapPath;
    this.isolation = opts.isolation ?? NO_ISOLATION;
  }

  /** Runtime ids carried, newest first (what the agent advertises). */
  get runtimeIds(): string[] {
    return [...this.#runtimes.keys()];
  }

  runtime(id: string): Runtime | undefined {
    return this.#runtimes.get(id);
  }

  /** Ready sandboxes waiting per runtime (for tests and the benchmark). */
  warmCount(runtimeId: string): number {
    return (this.#warm.get(runtimeId) ?? []).filter((s) => s.alive).length;
  }

  /** Sandboxes of the runtime being started for the pool (for tests). */
  startingCount(runtimeId: string): number {
    return this.#starting.get(runtimeId) ?? 0;
  }

  /** Per runtime: warm sandboxes waiting, sandboxes running a job, sandboxes being started for the pool. */
  counts(): SandboxCounts[] {
    return this.runtimeIds.map((runtime) => ({
      runtime,
      idle: this.warmCount(runtime),
      busy: [...this.#inUse].filter((s) => s.runtime.id === runtime).length,
      starting: this.startingCount(runtime),
    }));
  }

  /** Starts filling every runtime's pool; resolves when each has its first round of sandboxes ready. */
  async fill(): Promise<void> {
    await Promise.all(this.runtimeIds.map((id) => this.#refill(id)));
  }

  #refill(runtimeId: string): Promise<void> {
    const runtime = this.#runtimes.get(runtimeId);
    if (!runtime || this.#closed || (this.#pausedUntil.get(runtimeId) ?? 0) > Date.now()) return Promise.resolve();
    const warm = this.#warm.get(runtimeId) ?? [];
    this.#warm.set(runtimeId, warm);
    const missing = this.#size - warm.length - (this.#starting.get(runtimeId) ?? 0);
    const started: Promise<void>[] = [];
    for (let i = 0; i < missing; i++) {
      this.#starting.set(runtimeId, (this.#starting.get(runtimeId) ?? 0) + 1);
      const starting: Promise<void> = this.#startOne(runtime, true)
        .then(async (sandbox) => {
          // Closed while it started: it must not outlive the pool (close() awaits this).
          if (this.#closed) await sandbox.dispose();
          else warm.push(sandbox);
        })
        .catch((err: unknown) => {
          this.#pausedUntil.set(runtimeId, Date.now() + REFILL_PAUSE_MS);
          this.#log?.error(
            { err, runtime: runtimeId },
            'a warm sandbox could not start; jobs start their own until the pool recovers',
          );
        })
        .finally(() => {
          this.#starting.set(runtimeId, (this.#starting.get(runtimeId) ?? 1) - 1);
          this.#inFlight.delete(starting);
        });
      this.#inFlight.add(starting);
      started.push(starting);
    }
    return Promise.all(started).then(() => undefined);
  }

  /** `warm`: for the pool, so also run the warm-up step (a job starting its own would only wait longer). */
  async #startOne(runtime: Runtime, warm = false): Promise<SandboxProcess> {
    // Loaded on the first sandbox, not with the pool: it brings execa, which an agent that runs no user
    // code should not carry (see lazyRunner in ../checks/index.ts).
    const { SandboxProcess } = await import('./process.ts');
    const sandbox = await SandboxProcess.start({
      runtime,
      limits: this.limits,
      permissions: true,
      jobsRoot: this.#jobsRoot,
      bootstrapPath: this.#bootstrapPath,
      isolation: this.isolation,
    });
    try {
      await sandbox.ready();
      if (warm) await sandbox.warmUp();
    } catch (err) {
      await sandbox.dispose();
      throw err;
    }
    return sandbox;
  }

  /**
   * A ready sandbox of the runtime for one job, from the pool when one is warm, else started now.
   * The caller must dispose() it after the job. Throws RuntimeUnavailableError for a runtime the
   * agent does not carry and SandboxStartError when two sandboxes in a row could not start.
   */
  async acquire(runtimeId: string): Promise<SandboxProcess> {
    if (this.#closed) throw new SandboxStartError(runtimeId, 'the agent is shutting down; no sandbox is started');
    const runtime = this.#runtimes.get(runtimeId);
    if (!runtime) throw new RuntimeUnavailableError(runtimeId, this.runtimeIds);
    const warm = this.#warm.get(runtimeId) ?? [];
    let sandbox: SandboxProcess | undefined;
    while (warm.length > 0 && !sandbox) {
      const candidate = warm.shift()!;
      if (candidate.alive) sandbox = candidate;
      else void candidate.dispose();
    }
    // Starting a replacement costs a spawn in this process and CPU in the new one; begun now, it
    // competes with the job for both (BENCHMARKS.md, "Figures moved out of comments"). So while
    // another warm sandbox is left, the replacement waits for this job to end; only a pool this
    // job empties refills at once, so a burst of jobs does not drain it into cold starts.
    const deferRefill = sandbox !== undefined && warm.some((s) => s.alive);
    if (!deferRefill) void this.#refill(runtimeId);
    if (!sandbox) {
      try {
        sandbox = await this.#startOne(runtime);
      } catch (first) {
        // One retry on a fresh sandbox: a passing fault (fork failed under load) should not cost a run.
        this.#log?.warn({ err: first, runtime: runtimeId }, 'a sandbox could not start; trying once more');
        sandbox = await this.#startOne(runtime);
      }
    }
    const acquired = sandbox;
    // setImmediate: the job's result is put together first; the refill's first steps are not free.
    if (deferRefill) acquired.onFinished(() => setImmediate(() => void this.#refill(runtimeId)));
    this.#inUse.add(acquired);
    acquired.onDisposed(() => this.#inUse.delete(acquired));
    return acquired;
  }

  /** Kills every warm and running sandbox and removes their folders. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...[...this.#warm.values()].flat(), ...this.#inUse];
    this.#warm.clear();
    await Promise.all([...all.map((s) => s.dispose()), ...this.#inFlight]);
  }
}
