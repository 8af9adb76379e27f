/**
 * Echo requests through the persistent ICMP helper (outpost-icmp.c, ICMP_HELPER_PATH): one process
 * for the agent's life, one line per echo request each way, so a check costs no process and waits
 * for no batch. The helper holds the only ICMP sockets and no capability (docs/checks.md, ICMP).
 *
 * It is started on the first ping and started again on the ping after it has died; echo requests
 * that were in flight when it died reject with IcmpUnavailableError (the agent failed, not the
 * target, so no run reports a loss it did not see).
 */
import { type ChildProcess, spawn as nodeSpawn } from 'node:child_process';
import { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { raceAbort } from '../../net/run-signal.ts';
import {
  type Family,
  IcmpHelperStoppedError,
  IcmpUnavailableError,
  type Pinger,
  type PingRequest,
  type Spawn,
} from '../pinger.ts';

export interface IcmpHelperOptions {
  /** Path of the outpost-icmp binary (ICMP_HELPER_PATH). */
  path: string;
  spawn?: Spawn;
  /** Time between two echo requests of one run. */
  periodMs?: number;
  /** How long an echo request waits for its reply; a later reply counts as lost. */
  replyTimeoutMs?: number;
}

/** As fping's (FPING_DEFAULTS), so a run's timing does not depend on which pinger the agent has. */
export const HELPER_DEFAULTS = { periodMs: 500, replyTimeoutMs: 500 } as const;

type Echo = { resolve(rtt: number | null): void; reject(err: unknown): void };

/** What the helper said about each family's socket on its ready line: "dgram", "raw" or "none:…". */
type Modes = Record<Family, string>;

const READY = /^ready v4=(\S+) v6=(\S+)$/;

/** One running helper process: its ready line, its echo requests in flight by token. */
class HelperProcess {
  readonly ready: Promise<Modes>;
  readonly #child: ChildProcess;
  readonly #inFlight = new Map<number, Echo>();
  #outbox: string[] = [];
  #nextToken = 0;
  #buffered = '';
  #stderr = '';
  #onReady!: (modes: Modes) => void;
  #onStartFailed!: (err: IcmpUnavailableError) => void;
  /** Why it stopped; null while it runs. */
  #death: IcmpUnavailableError | null = null;
  #wasReady = false;

  constructor(child: ChildProcess, path: string) {
    this.#child = child;
    this.ready = new Promise<Modes>((resolve, reject) => {
      this.#onReady = resolve;
      this.#onStartFailed = reject;
    });
    // Handled by whoever pings; nobody may be waiting yet.
    this.ready.catch(() => {});
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.#read(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (this.#stderr.length < 2000) this.#stderr += chunk;
    });
    // Writing to a helper that just died: the exit handler below says so to every waiter.
    child.stdin?.on('error', () => {});
    // An idle helper must not keep the agent alive once everything else has stopped: only its start
    // and echo requests in flight hold the event loop (#holdLoop).
    child.unref();
    asSocket(child.stdin)?.unref();
    asSocket(child.stderr)?.unref();
    child.on('error', (err: NodeJS.ErrnoException) => this.#die(startError(path, err)));
    child.on('exit', (code, signal) => this.#die(exitError(path, code, signal, this.#stderr, this.#wasReady)));
  }

  get dead(): boolean {
    return this.#death !== null;
  }

  echo(family: Family, address: string): Promise<number | null> {
    if (this.#death) return Promise.reject(this.#death);
    const token = this.#nextToken;
    this.#nextToken = (this.#nextToken + 1) % 0x1_0000_0000;
    if (this.#outbox.length === 0) setImmediate(() => this.#flush());
    this.#outbox.push(`${token} ${family} ${address}\n`);
    return new Promise((resolve, reject) => {
      this.#inFlight.set(token, { resolve, reject });
      this.#holdLoop();
    });
  }

  #holdLoop(): void {
    const stdout = asSocket(this.#child.stdout);
    if (!this.#wasReady || this.#inFlight.size > 0) stdout?.ref();
    else stdout?.unref();
  }

  kill(): void {
    this.#child.kill('SIGKILL');
  }

  /** Requests of one turn of the event loop go out in one write. */
  #flush(): void {
    if (this.dead || this.#outbox.length === 0) return;
    this.#child.stdin?.write(this.#outbox.join(''));
    this.#outbox = [];
  }

  #read(chunk: string): void {
    const lines = (this.#buffered + chunk).split('\n');
    this.#buffered = lines.pop() ?? '';
    for (const line of lines) {
      const ready = READY.exec(line);
      if (ready) {
        this.#wasReady = true;
        this.#onReady({ 4: ready[1]!, 6: ready[2]! });
        this.#holdLoop();
        continue;
      }
      const [token, what] = line.split(' ', 2);
      const echo = this.#inFlight.get(Number(token));
      if (!echo) continue;
      this.#inFlight.delete(Number(token));
      // "timeout", or "error <reason>" (a send the kernel refused): no reply, as fping counts it.
      echo.resolve(what === 'timeout' || what === 'error' ? null : Number(what));
    }
    this.#holdLoop();
  }

  #die(err: IcmpUnavailableError): void {
    if (this.#death) return;
    this.#death = err;
    this.#onStartFailed(err);
    for (const echo of this.#inFlight.values()) echo.reject(err);
    this.#inFlight.clear();
  }
}

/** The pipes of a child started with stdio 'pipe' are sockets, which can be unref'd. */
function asSocket(stream: Readable | Writable | null | undefined): Socket | undefined {
  return stream instanceof Socket ? stream : undefined;
}

function startError(path: string, err: NodeJS.ErrnoException): IcmpUnavailableError {
  const why = err.code === 'ENOENT' ? 'does not exist' : `could not start (${err.message})`;
  return new IcmpUnavailableError(
    `ICMP is not available on this agent: the ICMP helper ${path} (ICMP_HELPER_PATH) ${why}`,
  );
}

/** Stopped after it was ready: the next ping starts another. Before: it cannot run here. */
function exitError(
  path: string,
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
  wasReady: boolean,
): IcmpUnavailableError {
  const how = signal ? `was stopped by ${signal}` : `exited with code ${code}`;
  const said = stderr.trim().slice(0, 300);
  return new (wasReady ? IcmpHelperStoppedError : IcmpUnavailableError)(
    `ICMP is not available on this agent: the ICMP helper ${path} ${how}${said ? ` (${said})` : ''}`,
  );
}

/** Words for a family the helper has no socket for ("none:EACCES/EPERM": datagram, then raw). */
function noSocket(family: Family, mode: string): IcmpUnavailableError {
  const [dgram, raw] = mode.slice('none:'.length).split('/');
  return new IcmpUnavailableError(
    `ICMP is not available on this agent for IPv${family}: the ICMP helper could not open a socket ` +
      `(datagram socket: ${dgram}, net.ipv4.ping_group_range must include the agent's group; ` +
      `raw socket: ${raw}, it needs the cap_net_raw file capability and NET_RAW in the container capability set)`,
  );
}

/** The agent's pinger when ICMP_HELPER_PATH names the helper. */
export class IcmpHelper implements Pinger {
  readonly label = 'the ICMP helper';
  readonly #path: string;
  readonly #spawn: Spawn;
  readonly #periodMs: number;
  readonly #replyTimeoutMs: number;
  #process: HelperProcess | null = null;
  spawned = 0;

  constructor(options: IcmpHelperOptions) {
    this.#path = options.path;
    this.#spawn = options.spawn ?? ((file, args) => nodeSpawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
    this.#periodMs = options.periodMs ?? HELPER_DEFAULTS.periodMs;
    this.#replyTimeoutMs = options.replyTimeoutMs ?? HELPER_DEFAULTS.replyTimeoutMs;
  }

  async ping(req: PingRequest): Promise<Array<number | null>> {
    const signal = req.signal ?? new AbortController().signal;
    signal.throwIfAborted();
    const helper = this.#current();
    const modes = await raceAbort(helper.ready, signal);
    if (modes[req.family].startsWith('none')) throw noSocket(req.family, modes[req.family]);
    const echoes: Array<Promise<number | null>> = [];
    for (let i = 0; i < req.count; i++) {
      if (i > 0) await delay(this.#periodMs, undefined, { signal });
      const echo = helper.echo(req.family, req.address);
      // Awaited together below; a helper that dies meanwhile must not be an unhandled rejection.
      echo.catch(() => {});
      echoes.push(echo);
      // A dead helper rejects the echo just asked for with its reason: Promise.all below says it.
      if (helper.dead) break;
    }
    return raceAbort(Promise.all(echoes), signal);
  }

  close(): void {
    this.#process?.kill();
    this.#process = null;
  }

  /** The running helper, or a new one when there is none or it has died. */
  #current(): HelperProcess {
    if (this.#process && !this.#process.dead) return this.#process;
    this.spawned++;
    this.#process = new HelperProcess(this.#spawn(this.#path, [String(this.#replyTimeoutMs)]), this.#path);
    return this.#process;
  }
}
