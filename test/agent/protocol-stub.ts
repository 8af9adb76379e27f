/**
 * A tiny stand-in for the service's agent protocol on loopback (node:http), enough to drive the
 * daemon: it hands out queued jobs within the agent's free slots, holds long-polls until a job
 * arrives or the wait passes, and records every call.
 */
import { EventEmitter, once } from 'node:events';
import type http from 'node:http';
import type { CheckClass } from '../../src/shared/checks/types.ts';
import {
  AGENT_PATHS,
  type HeartbeatRequest,
  type Job,
  type LeaseRequest,
  type LeaseState,
  type RegisterResponse,
  type ReleaseRequest,
  type ResultOutcome,
  type RunResult,
  type SubmitResultBatchRequest,
  type SubmitResultRequest,
} from '../../src/shared/protocol.ts';
import { type JsonServer, json, startServer } from './helpers.ts';

export interface StubOptions {
  heartbeatSeconds?: number;
  maxWaitSeconds?: number;
  /** Offered at registration; the stub then takes result-batches of up to this many. */
  resultBatchMax?: number;
}

export class ProtocolStub {
  server!: JsonServer;
  readonly queue: Job[] = [];
  readonly stored: RunResult[] = [];
  readonly resultAttempts: string[] = [];
  /** The run ids of every result-batches call, one list per call (failed calls included). */
  readonly batchAttempts: string[][] = [];
  /** Runs a result-batches call answers `unknown` for (what `results` answers with 404). */
  readonly unknownRuns = new Set<string>();
  readonly releases: ReleaseRequest[] = [];
  readonly heartbeats: HeartbeatRequest[] = [];
  readonly leaseRequests: LeaseRequest[] = [];
  registered = 0;
  deregistered = 0;
  /** Lease states the next heartbeats report, by runId (default active). */
  readonly leaseStates = new Map<string, LeaseState>();
  /** Status to answer each call with instead of the normal answer, by path. */
  readonly failWith = new Map<string, number>();
  /** Retry-After sent with those failures, by path. */
  readonly retryAfter = new Map<string, string>();
  /** While set, result uploads are held unanswered (a service slower to store than the agent runs) until it resolves. */
  holdResults: Promise<void> | undefined;
  /** Emits 'call' (path) for every request once it is recorded; tests await it instead of sleeping. */
  readonly events = new EventEmitter();
  #waiters: Array<() => void> = [];
  readonly #options: StubOptions;

  constructor(options: StubOptions = {}) {
    this.#options = options;
  }

  static async start(options: StubOptions = {}): Promise<ProtocolStub> {
    const stub = new ProtocolStub(options);
    stub.server = await startServer((req, body, res) => stub.#handle(req, body, res));
    return stub;
  }

  get url(): string {
    return this.server.url;
  }

  /** Resolves once `predicate` holds, re-checking after every recorded call. */
  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await once(this.events, 'call');
  }

  addJob(job: Job): void {
    this.queue.push(job);
    for (const w of this.#waiters.splice(0)) w();
  }

  close(): Promise<void> {
    for (const w of this.#waiters.splice(0)) w();
    return this.server.close();
  }

  /** An outage: the port refuses connections until restart(); what the stub recorded is kept. */
  async stop(): Promise<void> {
    await this.close();
    this.events.emit('stopped');
  }

  /** Back on the same port (so the agent's API_URL still points at it). */
  async restart(): Promise<void> {
    const old = this.server;
    this.server = await startServer((req, body, res) => this.#handle(req, body, res), old.port);
    // One list of requests across the outage, so tests can compare before and after.
    this.server.requests.unshift(...old.requests);
  }

  #take(slots: Record<CheckClass, number>): Job[] {
    const free = { ...slots };
    const out: Job[] = [];
    for (let i = 0; i < this.queue.length; ) {
      const job = this.queue[i] as Job;
      if (free[job.checkClass] > 0) {
        free[job.checkClass] -= 1;
        out.push(job);
        this.queue.splice(i, 1);
      } else i++;
    }
    return out;
  }

  #store(result: RunResult): { status: 'stored' | 'duplicate'; resultId: string } {
    const duplicate = this.stored.some((r) => r.runId === result.runId);
    if (!duplicate) this.stored.push(result);
    return { status: duplicate ? 'duplicate' : 'stored', resultId: `res-${result.runId}` };
  }

  #storeBatch(batch: SubmitResultBatchRequest, res: http.ServerResponse): void {
    const max = this.#options.resultBatchMax;
    if (!max || batch.results.length < 1 || batch.results.length > max) {
      json(res, 400, { statusCode: 400, error: 'Bad Request', message: `results: 1 to ${max} results` });
      return;
    }
    const outcomes: ResultOutcome[] = batch.results.map(({ result }) =>
      this.unknownRuns.has(result.runId)
        ? { runId: result.runId, status: 'unknown' }
        : { runId: result.runId, ...this.#store(result) },
    );
    json(res, 200, { outcomes });
  }

  async #handle(req: http.IncomingMessage, body: string, res: http.ServerResponse): Promise<void> {
    const path = req.url ?? '';
    const failure = this.failWith.get(path);
    if (path === AGENT_PATHS.results) this.resultAttempts.push((JSON.parse(body) as SubmitResultRequest).result.runId);
    if (path === AGENT_PATHS.resultBatches)
      this.batchAttempts.push((JSON.parse(body) as SubmitResultBatchRequest).results.map((r) => r.result.runId));
    if (path === AGENT_PATHS.lease) this.leaseRequests.push(JSON.parse(body) as LeaseRequest);
    // After the records above, before any answer: a waiter sees this call in the lists.
    queueMicrotask(() => this.events.emit('call', path));
    if (failure) {
      const retryAfter = this.retryAfter.get(path);
      if (retryAfter !== undefined) res.setHeader('retry-after', retryAfter);
      json(res, failure, { statusCode: failure, error: 'Stub', message: `stub answers ${failure}` });
      return;
    }
    switch (path) {
      case AGENT_PATHS.register: {
        this.registered += 1;
        const reg: RegisterResponse = {
          agentId: JSON.parse(body).agentId,
          location: { id: 'loc-1', slugName: 'test-location', name: 'Test location' },
          leaseSeconds: 30,
          heartbeatSeconds: this.#options.heartbeatSeconds ?? 1,
          maxWaitSeconds: this.#options.maxWaitSeconds ?? 1,
          errorReportingDsn: null,
          ...(this.#options.resultBatchMax ? { resultBatchMax: this.#options.resultBatchMax } : {}),
        };
        json(res, 200, reg);
        return;
      }
      case AGENT_PATHS.lease: {
        const lease = JSON.parse(body) as LeaseRequest;
        let jobs = this.#take(lease.slots);
        if (jobs.length === 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, lease.waitSeconds * 1000);
            this.#waiters.push(() => {
              clearTimeout(timer);
              resolve();
            });
          });
          jobs = this.#take(lease.slots);
        }
        if (res.destroyed) {
          // The agent hung up (shutdown): give the jobs back to the queue.
          this.queue.unshift(...jobs);
          return;
        }
        json(res, 200, { jobs });
        return;
      }
      case AGENT_PATHS.heartbeat: {
        const hb = JSON.parse(body) as HeartbeatRequest;
        this.heartbeats.push(hb);
        json(res, 200, {
          leases: hb.leases.map((l) => ({
            ...l,
            state: this.leaseStates.get(l.runId) ?? 'active',
            leaseExpiresAt: new Date(Date.now() + 30_000).toISOString(),
          })),
        });
        return;
      }
      case AGENT_PATHS.results: {
        await this.holdResults;
        const { result } = JSON.parse(body) as SubmitResultRequest;
        json(res, 200, this.#store(result));
        return;
      }
      case AGENT_PATHS.resultBatches:
        await this.holdResults;
        this.#storeBatch(JSON.parse(body) as SubmitResultBatchRequest, res);
        return;
      case AGENT_PATHS.release:
        this.releases.push(JSON.parse(body) as ReleaseRequest);
        json(res, 200, {});
        return;
      case AGENT_PATHS.deregister:
        this.deregistered += 1;
        res.writeHead(204);
        res.end();
        return;
      default:
        json(res, 404, { statusCode: 404, error: 'Not Found', message: `no route ${path}` });
    }
  }
}

let counter = 0;
export function makeJob(overrides: Partial<Job> & { checkType?: Job['check']['checkType'] } = {}): Job {
  counter += 1;
  const { checkType = 'API', ...rest } = overrides;
  const runId = rest.runId ?? `run-${counter}`;
  return {
    runId,
    leaseId: `lease-${runId}`,
    leaseExpiresAt: new Date(Date.now() + 30_000).toISOString(),
    leaseAttempt: 1,
    dueAt: new Date(Date.now() - 5).toISOString(),
    checkClass:
      checkType === 'API' || checkType === 'TCP' || checkType === 'DNS' || checkType === 'ICMP' ? 'uptime' : 'heavy',
    timeoutMs: 30_000,
    check: {
      id: `check-${runId}`,
      accountId: 'acc',
      name: 'a check',
      checkType,
      shouldFail: false,
      runtimeId: null,
    } as Job['check'],
    ...rest,
  };
}
