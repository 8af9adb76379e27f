/**
 * One sandbox: a child process (execa) of the runtime's Node running ./child/bootstrap.cjs in a
 * fresh job folder (its cwd, HOME and TMPDIR), in its own session and process group. It is started
 * ahead of a job (the warm pool), serves exactly one job, and is then killed with everything it
 * started and its folder removed, so nothing carries over between jobs.
 *
 * The agent reads three pipes from it, all bounded: stdout and stderr (the user's console output,
 * kept as timed lines up to an output cap) and fd 3 (the bootstrap's JSON messages, up to a byte
 * cap). It writes the job's steps to stdin. Memory is bounded twice: V8's heap cap and a watchdog
 * on resident memory read from /proc while a step runs.
 */
import { randomUUID } from 'node:crypto';
import { chmod, chown, mkdir, realpath, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import type { Runtime } from '../runtimes.ts';
import { SANDBOX_MARKER_VAR, sandboxEnv, sandboxNodeFlags } from './env.ts';
import { SandboxStartError } from './errors.ts';
import { giveToUid, launchArgs, NO_ISOLATION, releaseSandboxUid, type SandboxIsolation } from './isolation.ts';
import { killSandboxTree, rssBytes, type SandboxMarks, treeRssBytes } from './procfs.ts';
import type { LogLine, SandboxLimits, SandboxStep, ScriptErrorInfo, StepOutcome } from './types.ts';

export const BOOTSTRAP_PATH = fileURLToPath(new URL('./child/bootstrap.cjs', import.meta.url));

/** fd-3 messages kept at most: a step's context carries a request or a response (body ≤ 256 KiB). */
const CONTROL_CAP_BYTES = 8 * 1024 * 1024;

/** The bootstrap prints this once on each stream before it is ready, to warm the console; never logged. */
const WARM_UP_LINE = '\u0000outpost-warm-up\u0000';

/** `<tmpdir>/outpost-jobs`: job folders live here, one per sandbox, mode 0700. */
export function defaultJobsRoot(): string {
  return path.join(os.tmpdir(), 'outpost-jobs');
}

export interface SandboxOptions {
  runtime: Runtime;
  limits: SandboxLimits;
  /** Node's permission model (setup and teardown scripts); off only for code that needs more. */
  permissions: boolean;
  jobsRoot?: string;
  /** Tests start a different program to simulate a sandbox that cannot start. */
  bootstrapPath?: string;
  /** A uid of its own per sandbox (./isolation.ts), or none: the agent's user. */
  isolation?: SandboxIsolation;
}

type ControlMessage =
  | { type: 'ready'; node?: string }
  | {
      type: 'done';
      stage?: string;
      ok: boolean;
      context?: Record<string, unknown>;
      error?: Partial<ScriptErrorInfo>;
      secrets?: unknown;
    }
  | { type: 'exit'; code?: number; stage?: string };

interface Exit {
  code: number | null;
  signal: string | null;
}

function asError(v: unknown): ScriptErrorInfo {
  const e = (v && typeof v === 'object' ? v : {}) as Partial<ScriptErrorInfo>;
  return {
    name: typeof e.name === 'string' ? e.name.slice(0, 200) : 'Error',
    message: typeof e.message === 'string' ? e.message : 'the script failed',
    line: typeof e.line === 'number' ? e.line : null,
    column: typeof e.column === 'number' ? e.column : null,
    stack: typeof e.stack === 'string' ? e.stack : null,
  };
}

/**
 * A sandbox uid must be able to pass through every folder above its job folder; one that cannot
 * (a TMPDIR under a 0700 folder) would fail each run with a baffling error, so say which folder.
 */
async function assertPassable(dir: string, runtimeId: string): Promise<void> {
  for (let d = dir; ; d = path.dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) {
      throw new SandboxStartError(
        runtimeId,
        `the sandbox for runtime ${runtimeId} could not start: its uid cannot pass through ${d} (mode ${(mode & 0o777).toString(8)}); give the jobs folder (TMPDIR) parents that others may pass through (chmod o+x)`,
      );
    }
    if (path.dirname(d) === d) return;
  }
}

export class SandboxProcess {
  readonly id: string;
  readonly jobDir: string;
  readonly runtime: Runtime;
  readonly permissions: boolean;
  /** The sandbox's Node version as the bootstrap reported it. */
  nodeVersion: string | undefined;

  readonly #limits: SandboxLimits;
  readonly #marks: SandboxMarks;
  readonly #isolation: SandboxIsolation;
  readonly #stdin: Writable | null;
  readonly #lines: LogLine[] = [];
  readonly #partial = { stdout: '', stderr: '' };
  readonly #exited: Promise<Exit>;
  readonly #readyPromise: Promise<void>;
  #outputBytes = 0;
  #droppedBytes = 0;
  #controlBytes = 0;
  #controlBuffer = '';
  #heapOom = false;
  #exit: Exit | undefined;
  #spawnError: string | undefined;
  #killedFor: 'memory' | undefined;
  #memoryDetail = '';
  #disposed: Promise<void> | undefined;
  #marker: string | undefined;
  #markerSeen = { stdout: false, stderr: false };
  #onMarker: (() => void) | undefined;
  readonly #carry = { stdout: '', stderr: '' };
  #onMessage: ((m: ControlMessage) => void) | undefined;
  readonly #onExit = new Set<() => void>();
  readonly #disposedListeners: Array<() => void> = [];
  #finishedListeners: Array<() => void> | undefined = [];

  /** Creates the job folder and starts the process; `ready` settles when it can take a job. */
  static async start(opts: SandboxOptions): Promise<SandboxProcess> {
    const root = opts.jobsRoot ?? defaultJobsRoot();
    // 0711 on every folder made here: sandbox uids must pass through them (no listing) to their own.
    await mkdir(root, { recursive: true, mode: 0o711 });
    const id = randomUUID();
    // Real path: the permission model compares resolved paths, and /tmp may be a symlink.
    const jobDir = path.join(await realpath(root), id);
    const isolation = opts.isolation ?? NO_ISOLATION;
    if (isolation.kind === 'none') {
      await mkdir(jobDir, { mode: 0o700 });
      return new SandboxProcess(opts, id, jobDir, isolation, undefined);
    }
    const uid = isolation.uids.take();
    if (uid === undefined) {
      throw new SandboxStartError(
        opts.runtime.id,
        `the sandbox for runtime ${opts.runtime.id} could not start: all ${isolation.uids.count} sandbox uids from ${isolation.uids.base} are in use`,
      );
    }
    try {
      // Sandbox uids pass through the jobs folder (no listing) into their own 0700 folder only.
      await chmod(root, 0o711);
      await assertPassable(path.dirname(jobDir), opts.runtime.id);
      await mkdir(jobDir, { mode: 0o700 });
      await chown(jobDir, uid, uid);
    } catch (err) {
      isolation.uids.release(uid);
      throw err;
    }
    return new SandboxProcess(opts, id, jobDir, isolation, uid);
  }

  private constructor(
    opts: SandboxOptions,
    id: string,
    jobDir: string,
    isolation: SandboxIsolation,
    uid: number | undefined,
  ) {
    this.id = id;
    this.jobDir = jobDir;
    this.runtime = opts.runtime;
    this.permissions = opts.permissions;
    this.#limits = opts.limits;
    const bootstrap = opts.bootstrapPath ?? BOOTSTRAP_PATH;
    const env = sandboxEnv(opts.runtime, jobDir, id);
    const args = [
      ...sandboxNodeFlags(opts.runtime, jobDir, bootstrap, opts.limits, opts.permissions),
      bootstrap,
      opts.runtime.dir,
    ];
    this.#isolation = isolation;
    const [file, fileArgs] =
      isolation.kind === 'uid' && uid !== undefined
        ? [isolation.launcher, launchArgs(uid, opts.runtime.nodePath, args)]
        : [opts.runtime.nodePath, args];
    const sub = execa(file, fileArgs, {
      cwd: jobDir,
      env,
      extendEnv: false,
      // Own session and process group: one signal reaches the whole group, and the sandbox has no
      // controlling terminal to signal the agent through.
      detached: true,
      buffer: false,
      reject: false,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    this.#marks = { rootPid: sub.pid, jobDir, envMarker: `${SANDBOX_MARKER_VAR}=${id}`, uid };
    this.#stdin = sub.stdin;
    this.#exited = sub.then((res) => {
      const exit: Exit = { code: res.exitCode ?? null, signal: res.signal ?? null };
      if (sub.pid === undefined || (res.failed && res.exitCode === undefined && res.signal === undefined)) {
        this.#spawnError = res.shortMessage ?? res.message ?? 'the process could not be started';
      }
      this.#exit = exit;
      for (const fn of this.#onExit) fn();
      return exit;
    });
    // Writes to a sandbox that died are expected; the exit tells the story.
    sub.stdin?.on('error', () => {});
    this.#readOutput(sub.stdout, 'stdout');
    this.#readOutput(sub.stderr, 'stderr');
    this.#readControl(sub.stdio[3] as Readable | undefined);
    this.#readyPromise = this.#waitReady();
    // Nobody may be awaiting yet (a warm sandbox): keep a failed start from being an unhandled rejection.
    this.#readyPromise.catch(() => {});
  }

  get pid(): number | undefined {
    return this.#marks.rootPid;
  }

  /** The sandbox's own uid, when it has one (./isolation.ts). */
  get uid(): number | undefined {
    return this.#marks.uid;
  }

  /** Gives what the agent wrote into the job folder before the run to the sandbox's uid. */
  async adoptJobFolder(): Promise<void> {
    if (this.#marks.uid !== undefined) await giveToUid(this.jobDir, this.#marks.uid);
  }

  get alive(): boolean {
    return this.#exit === undefined && this.#disposed === undefined;
  }

  /** Resolves once the bootstrap is loaded and waits for a job; rejects with SandboxStartError. */
  ready(): Promise<void> {
    return this.#readyPromise;
  }

  #waitReady(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fail = (why: string): void => {
        cleanup();
        reject(
          new SandboxStartError(
            this.runtime.id,
            `the sandbox for runtime ${this.runtime.id} (${this.runtime.nodePath}) could not start: ${why}`,
          ),
        );
      };
      const timer = setTimeout(() => {
        fail(`it was not ready within ${this.#limits.startTimeoutMs} ms`);
        void this.dispose();
      }, this.#limits.startTimeoutMs);
      const onExit = (): void => {
        const exit = this.#exit;
        const tail = this.#lines
          .filter((l) => l.stream === 'stderr')
          .slice(-3)
          .map((l) => l.msg)
          .join(' | ');
        fail(
          this.#spawnError ??
            `it exited before it was ready (${exit?.signal ? `signal ${exit.signal}` : `exit code ${exit?.code}`})${tail ? `: ${tail.slice(0, 500)}` : ''}`,
        );
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#onExit.delete(onExit);
        this.#onMessage = undefined;
      };
      this.#onExit.add(onExit);
      this.#onMessage = (m) => {
        if (m.type !== 'ready') return;
        this.nodeVersion = typeof m.node === 'string' ? m.node : undefined;
        cleanup();
        resolve();
      };
    });
  }

  #readOutput(stream: Readable | null | undefined, name: 'stdout' | 'stderr'): void {
    if (!stream) return;
    const decoder = new StringDecoder('utf8');
    stream.on('data', (chunk: Buffer) => {
      const text = decoder.write(chunk);
      if (
        name === 'stderr' &&
        !this.#heapOom &&
        /heap out of memory|Reached heap limit/.test(this.#partial.stderr.slice(-64) + text)
      ) {
        this.#heapOom = true;
      }
      this.#takeWatchingMarker(name, text);
    });
    stream.on('end', () => {
      this.#take(name, this.#carry[name] + decoder.end());
      this.#carry[name] = '';
      this.#flushPartial(name);
      this.#markerSeen[name] = true;
      this.#onMarker?.();
    });
    stream.on('error', () => {});
  }

  /**
   * While a step runs, its end marker is cut out of the stream (a chunk may end inside it, so the
   * last marker-length characters wait for the next chunk); text after the marker is later output.
   */
  #takeWatchingMarker(name: 'stdout' | 'stderr', text: string): void {
    const marker = this.#marker;
    if (marker === undefined || this.#markerSeen[name]) {
      this.#take(name, text);
      return;
    }
    const all = this.#carry[name] + text;
    const at = all.indexOf(marker);
    if (at >= 0) {
      this.#carry[name] = '';
      this.#take(name, all.slice(0, at));
      this.#flushPartial(name);
      this.#markerSeen[name] = true;
      this.#take(name, all.slice(at + marker.length));
      this.#onMarker?.();
      return;
    }
    const keep = Math.min(all.length, marker.length - 1);
    this.#carry[name] = all.slice(all.length - keep);
    this.#take(name, all.slice(0, all.length - keep));
  }

  /** Ends marker watching: whatever was held back is ordinary output. */
  #stopWatchingMarker(): void {
    this.#marker = undefined;
    this.#onMarker = undefined;
    for (const name of ['stdout', 'stderr'] as const) {
      const held = this.#carry[name];
      this.#carry[name] = '';
      this.#take(name, held);
    }
  }

  /** Splits output into lines and keeps them while under the output cap; the rest is only counted. */
  #take(name: 'stdout' | 'stderr', text: string): void {
    if (text === '') return;
    if (this.#outputBytes >= this.#limits.outputBytes) {
      this.#droppedBytes += Buffer.byteLength(text);
      return;
    }
    let buf = this.#partial[name] + text;
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      this.#push(name, buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      nl = buf.indexOf('\n');
    }
    // A line that never ends is cut at the line cap rather than buffered without bound.
    while (buf.length > this.#limits.lineBytes) {
      this.#push(name, buf.slice(0, this.#limits.lineBytes));
      buf = buf.slice(this.#limits.lineBytes);
    }
    this.#partial[name] = buf;
  }

  #flushPartial(name: 'stdout' | 'stderr'): void {
    if (this.#partial[name] !== '') this.#push(name, this.#partial[name]);
    this.#partial[name] = '';
  }

  #push(name: 'stdout' | 'stderr', raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith(WARM_UP_LINE)) return;
    const bytes = Buffer.byteLength(line) + 1;
    if (this.#outputBytes + bytes > this.#limits.outputBytes) {
      this.#droppedBytes += bytes;
      this.#outputBytes = this.#limits.outputBytes;
      return;
    }
    this.#outputBytes += bytes;
    const msg =
      line.length > this.#limits.lineBytes
        ? `${line.slice(0, this.#limits.lineBytes)} [line cut at ${this.#limits.lineBytes} characters]`
        : line;
    this.#lines.push({ time: new Date().toISOString(), stream: name, msg });
  }

  #readControl(stream: Readable | undefined): void {
    if (!stream) return;
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      this.#controlBytes += Buffer.byteLength(text);
      if (this.#controlBytes > CONTROL_CAP_BYTES) {
        // Only user code can make the control channel this big (it can write to fd 3): stop it.
        if (this.#controlBytes - Buffer.byteLength(text) <= CONTROL_CAP_BYTES) {
          this.#onMessage?.({
            type: 'done',
            ok: false,
            error: { name: 'SandboxError', message: `the script sent more than ${CONTROL_CAP_BYTES} bytes of results` },
          });
          void this.#kill();
        }
        return;
      }
      this.#controlBuffer += text;
      let nl = this.#controlBuffer.indexOf('\n');
      while (nl >= 0) {
        const line = this.#controlBuffer.slice(0, nl);
        this.#controlBuffer = this.#controlBuffer.slice(nl + 1);
        nl = this.#controlBuffer.indexOf('\n');
        let message: ControlMessage;
        try {
          message = JSON.parse(line) as ControlMessage;
        } catch {
          continue;
        }
        if (message && typeof message === 'object') this.#onMessage?.(message);
      }
    });
    stream.on('error', () => {});
  }

  /**
   * Runs one step and settles with how it ended. Never throws: a dead sandbox, a timeout, memory
   * and an abort are all outcomes.
   */
  run(step: SandboxStep, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<StepOutcome> {
    const marker = `\u0000outpost-step-end-${randomUUID()}\u0000`;
    this.#marker = marker;
    if (this.#exit === undefined) this.#markerSeen = { stdout: false, stderr: false };
    return new Promise<StepOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: StepOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(markerTimer);
        clearInterval(watchdog);
        opts.signal?.removeEventListener('abort', onAbort);
        this.#onExit.delete(onExit);
        this.#onMessage = undefined;
        this.#stopWatchingMarker();
        resolve(outcome);
      };
      let markerTimer: NodeJS.Timeout | undefined;
      // A step's result counts once its output is complete: both markers seen (or the streams ended).
      // A script that broke stdout or stderr gets a short wait instead.
      const whenOutputComplete = (outcome: StepOutcome): void => {
        const complete = (): boolean => this.#markerSeen.stdout && this.#markerSeen.stderr;
        if (complete()) {
          finish(outcome);
          return;
        }
        this.#onMarker = () => {
          if (complete()) finish(outcome);
        };
        markerTimer = setTimeout(() => finish(outcome), 250);
      };
      const timer = setTimeout(() => {
        void this.#kill();
        finish({ kind: 'timeout', limitMs: opts.timeoutMs });
      }, opts.timeoutMs);
      const watchdog = setInterval(() => this.#checkMemory(), this.#limits.watchdogIntervalMs);
      const onAbort = (): void => {
        void this.#kill();
        finish({ kind: 'aborted', reason: opts.signal?.reason });
      };
      const onExit = (): void => {
        const exit = this.#exit ?? { code: null, signal: null };
        if (this.#killedFor === 'memory') finish({ kind: 'memory', detail: this.#memoryDetail });
        else if (this.#heapOom)
          finish({ kind: 'memory', detail: `the V8 heap limit of ${this.#limits.heapMb} MB was reached` });
        else finish({ kind: 'exited', code: exit.code, signal: exit.signal });
      };
      this.#onMessage = (m) => {
        if (m.type === 'done') {
          if (m.ok) {
            const secrets = Array.isArray(m.secrets) ? m.secrets.filter((v): v is string => typeof v === 'string') : [];
            whenOutputComplete({
              kind: 'ok',
              context: m.context && typeof m.context === 'object' ? m.context : {},
              secrets,
            });
          } else whenOutputComplete({ kind: 'script-error', error: asError(m.error) });
        } else if (m.type === 'exit') {
          // process.exit() in the script: the exit itself follows; remember the code it asked for.
          const code = typeof m.code === 'number' ? m.code : null;
          whenOutputComplete({ kind: 'exited', code, signal: null });
        }
      };
      if (opts.signal?.aborted) {
        onAbort();
        return;
      }
      if (this.#exit !== undefined) {
        onExit();
        return;
      }
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.#onExit.add(onExit);
      this.#stdin?.write(`${JSON.stringify({ ...step, marker })}\n`);
    });
  }

  /**
   * One empty step through the whole path (stdin, the bootstrap's step runner, the end markers on
   * stdout and stderr, the answer on fd 3), so that a job's first step finds that code compiled and
   * warm in both processes instead of paying for it (BENCHMARKS.md, "Figures moved out of comments"). The pool does this
   * before a sandbox counts as warm; a cold start skips it, as it would only move the cost.
   */
  async warmUp(): Promise<void> {
    const outcome = await this.run(
      { stage: 'setup', filename: 'warm-up.js', code: '', env: {}, context: {} },
      { timeoutMs: this.#limits.startTimeoutMs },
    );
    if (outcome.kind !== 'ok') {
      throw new SandboxStartError(
        this.runtime.id,
        `the sandbox for runtime ${this.runtime.id} (${this.runtime.nodePath}) could not start: its warm-up step ended as ${outcome.kind}`,
      );
    }
  }

  #checkMemory(): void {
    const pid = this.#marks.rootPid;
    if (pid === undefined || this.#exit !== undefined || this.#killedFor) return;
    // With the permission model the sandbox cannot start processes: its own RSS is the tree's.
    const rss = this.permissions ? rssBytes(pid) : treeRssBytes(this.#marks);
    if (rss > this.#limits.rssMb * 1024 * 1024) {
      this.#killedFor = 'memory';
      this.#memoryDetail = `resident memory reached ${Math.round(rss / 1024 / 1024)} MB, over the limit of ${this.#limits.rssMb} MB`;
      void this.#kill();
    }
  }

  async #kill(): Promise<void> {
    await killSandboxTree(this.#marks);
  }

  /**
   * The uid goes back to the pool only with no process of it left and nothing of it in the shared
   * temporary folders (only a sandbox without the permission model can write there), so the next
   * sandbox under it starts clean.
   */
  async #releaseUid(): Promise<void> {
    const { uid } = this.#marks;
    if (uid !== undefined) await releaseSandboxUid(this.#isolation, { ...this.#marks, uid }, !this.permissions);
  }

  /** The check's log: every kept line, and a note when output was dropped at the cap. */
  output(): { lines: LogLine[]; truncated: boolean; droppedBytes: number } {
    const lines = [...this.#lines];
    if (this.#droppedBytes > 0) {
      lines.push({
        time: new Date().toISOString(),
        stream: 'stderr',
        msg: `[output truncated: ${this.#droppedBytes} more bytes were dropped past the ${this.#limits.outputBytes}-byte cap]`,
      });
    }
    return { lines, truncated: this.#droppedBytes > 0, droppedBytes: this.#droppedBytes };
  }

  /** Calls `fn` once, when the job ends: the first finish() (dispose() calls it too); at once if it has. */
  onFinished(fn: () => void): void {
    if (this.#finishedListeners) this.#finishedListeners.push(fn);
    else fn();
  }

  /** Calls `fn` once the sandbox is disposed (killed and its folder removed). */
  onDisposed(fn: () => void): void {
    this.#disposedListeners.push(fn);
  }

  /**
   * Ends the job's process at once (SIGKILL to its group: a sandbox is never reused, so there is
   * nothing to shut down gracefully). Each step's output was complete when its result came back
   * (the step-end markers), so output() is the job's log from here on.
   */
  finish(): void {
    const listeners = this.#finishedListeners;
    this.#finishedListeners = undefined;
    this.#stdin?.end();
    if (this.#exit === undefined && this.#marks.rootPid !== undefined) {
      try {
        process.kill(-this.#marks.rootPid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    for (const fn of listeners ?? []) fn();
  }

  /**
   * Ends the job for good: finish(), then kills whatever is left of the tree (also processes that
   * left the group) and removes the job folder.
   */
  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      this.finish();
      await this.#kill();
      await this.#exited;
      await rm(this.jobDir, { recursive: true, force: true, maxRetries: 3 });
      await this.#releaseUid();
      for (const fn of this.#disposedListeners) fn();
    })();
    return this.#disposed;
  }
}
