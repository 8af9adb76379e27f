import { EventEmitter } from 'node:events';
import type { SubmitResultRequest } from '../shared/protocol.ts';
import { Backoff, type BackoffOptions, DELIVERY_BACKOFF } from './backoff.ts';
import { retryHintOf } from './client.ts';
import { type ResultClient, ResultSender, type SendAttempt, type Settled } from './result-sender.ts';
import type { ResultSpool, SpoolEntry } from './spool.ts';
import type { Log } from '../shared/log.ts';

/**
 * The single deliverer of results. Results not yet on disk wait in `#pending` (newest last); results
 * that failed to upload sit in the spool (oldest).
 *
 * Two modes. While the service answers, fresh results go out as they come, up to LIVE_UPLOADS at
 * once: one upload at a time would cap an agent at one result per round trip and make results queue
 * behind each other under load. As soon as an upload fails, that result goes to the spool, and from
 * then on everything is strictly ordered: the spool is drained oldest first, one upload at a time,
 * and new results are written behind it rather than sent first. Invariant: everything in the spool is
 * older than everything pending (uploads in flight when the first failure happened may land in the
 * spool in any order among themselves: they were concurrent anyway).
 *
 * Batches: once the service's registration answer carries `resultBatchMax` (useBatches), results
 * that finish close together go out in one `result-batches` call: the first result of a batch
 * waits at most GATHER_MS for others, or less when the batch fills. The spool is drained in batches
 * too. A batch that fails is retried whole (spooled first when it was a live one). Without
 * `resultBatchMax`, one result per `results` call.
 *
 * A `duplicate`
 * answer counts as delivered: the service is idempotent by runId, so a crash between upload and ack
 * just means the next start uploads the same result again and the service says "duplicate".
 *
 * Events: 'delivered' ({runId, status}), 'spooled' ({runId}), 'rejected' ({runId, message}).
 */
export interface DelivererOptions {
  client: ResultClient;
  spool: ResultSpool;
  log: Log;
  backoff?: BackoffOptions;
}

/** Uploads in flight while the service answers; enough to keep up with a busy agent on one connection pool. */
export const LIVE_UPLOADS = 8;

/**
 * How long the first result of a batch waits for others (docs/protocol.md says why this long): a
 * small share of the time a result may take to be stored, and enough to gather several at a
 * busy agent's rate.
 */
export const GATHER_MS = 50;

export class ResultDeliverer extends EventEmitter {
  readonly #sender: ResultSender;
  readonly #spool: ResultSpool;
  readonly #log: Log;
  readonly #backoff: Backoff;
  readonly #pending: SubmitResultRequest[] = [];
  /** When the oldest result in #pending arrived (performance.now()): its gathering window's start. */
  #pendingSince = 0;
  #wake: (() => void) | undefined;
  #worker: Promise<void> | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #closing = false;
  /** Cuts an upload in flight and the backoff wait when the agent shuts down. */
  readonly #abort = new AbortController();
  #rejected = 0;
  #delivered = 0;

  constructor(options: DelivererOptions) {
    super();
    this.#sender = new ResultSender(options.client);
    this.#spool = options.spool;
    this.#log = options.log;
    this.#backoff = new Backoff(options.backoff ?? DELIVERY_BACKOFF);
  }

  /** Results waiting in memory (not yet on disk). */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Results in memory that cannot leave now: all of them while every upload slot is taken, else
   * those beyond the one batch still gathering (it leaves within GATHER_MS). The daemon's
   * backpressure counts these: a batch gathering is on its way, not a backlog.
   */
  get backlog(): number {
    const n = this.#pending.length;
    return this.#inFlight.size >= LIVE_UPLOADS ? n : Math.max(0, n - this.#sender.batchMax);
  }

  /** Results the service refused for good (4xx other than 401), dropped after an error log. */
  get rejectedTotal(): number {
    return this.#rejected;
  }

  get deliveredTotal(): number {
    return this.#delivered;
  }

  /** The most results one upload carries (1: one `results` call each). */
  get batchMax(): number {
    return this.#sender.batchMax;
  }

  /** The registration answer's `resultBatchMax`: batches of up to that many from now on. */
  useBatches(resultBatchMax: number | undefined): void {
    this.#sender.useBatches(resultBatchMax);
  }

  /** Starts draining whatever an earlier process left in the spool. */
  start(): void {
    this.#worker ??= this.#run().catch((err: unknown) => {
      this.#log.error({ err }, 'result deliverer stopped unexpectedly');
    });
  }

  deliver(item: SubmitResultRequest): void {
    if (this.#pending.length === 0) this.#pendingSince = performance.now();
    // Late results after close() still must not be lost: they stay in the pending list, which
    // drainOnce() persists.
    this.#pending.push(item);
    if (this.#closing) return;
    this.start();
    this.#wake?.();
  }

  /** Stops the worker after the current step; nothing is lost (see drainOnce). */
  async close(): Promise<void> {
    this.#closing = true;
    this.#abort.abort();
    this.#wake?.();
    await this.#worker;
    // Uploads cut by the abort put their results in the spool; wait until they are on disk.
    await Promise.all(this.#inFlight);
  }

  /**
   * At shutdown: persist what is pending (a batch still gathering included), then try the spool once,
   * in order, stopping at the first failure. Whatever is left stays on disk for the next start.
   */
  async drainOnce(timeoutMs = 10_000): Promise<void> {
    await this.#persistPending();
    const signal = AbortSignal.timeout(timeoutMs);
    while (!signal.aborted) {
      const attempt = await this.#sendSpooled(signal);
      if (!attempt || attempt.retry) break;
    }
    if (this.#spool.size > 0) {
      this.#log.warn({ spooled: this.#spool.size }, 'results left in the spool; they are sent at the next start');
    }
  }

  async #run(): Promise<void> {
    while (!this.#closing) {
      if (this.#spool.size > 0) {
        await this.#spoolStep();
        continue;
      }
      const waitMs = this.#liveStep();
      if (waitMs > 0) await this.#sleep(waitMs);
    }
  }

  /** One upload from the spool, oldest first; on failure, the backoff wait before the next try. */
  async #spoolStep(): Promise<void> {
    await this.#persistPending();
    const attempt = await this.#sendSpooled(this.#abort.signal);
    if (!attempt || this.#closing) return;
    if (attempt.retry) await this.#waitBackoff(attempt.retry);
    else this.#backoff.reset();
  }

  /** Sends the oldest spooled results as one upload and acks those settled; undefined when the spool is empty. */
  async #sendSpooled(signal: AbortSignal): Promise<SendAttempt | undefined> {
    const entries = await this.#spool.peekMany(this.#sender.batchMax);
    if (entries.length === 0) return undefined;
    const batch: SpoolEntry[] = entries.slice(0, this.#sender.takeCount(entries.map((e) => e.item)));
    const attempt = await this.#sender.send(
      batch.map((e) => e.item),
      signal,
    );
    for (const [i, settled] of attempt.settled.entries()) {
      await this.#spool.ack((batch[i] as SpoolEntry).seq);
      this.#settled(settled);
    }
    return attempt;
  }

  /**
   * Starts a live upload when one may go; returns 0 when it did, else how long to wait for a reason
   * to look again (a gathering window to run out; Infinity: until woken).
   */
  #liveStep(): number {
    if (this.#pending.length === 0 || this.#inFlight.size >= LIVE_UPLOADS) return Number.POSITIVE_INFINITY;
    const gathering = this.#gatherLeftMs();
    if (gathering > 0) return gathering;
    const batch = this.#pending.splice(0, this.#sender.takeCount(this.#pending));
    const upload: Promise<void> = this.#uploadLive(batch).finally(() => {
      this.#inFlight.delete(upload);
      this.#wake?.();
    });
    this.#inFlight.add(upload);
    return 0;
  }

  /** Time left in the oldest pending result's gathering window; 0 when a batch may go now. */
  #gatherLeftMs(): number {
    const max = this.#sender.batchMax;
    if (max === 1 || this.#pending.length >= max) return 0;
    return Math.max(0, this.#pendingSince + GATHER_MS - performance.now());
  }

  /** Resolves after `ms` (Infinity: never by itself) or when woken by a new result or a finished upload. */
  async #sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : undefined;
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  /** Fresh results straight to the service; on a transient failure the unsent go to the spool. */
  async #uploadLive(batch: SubmitResultRequest[]): Promise<void> {
    const attempt = await this.#sender.send(batch, this.#abort.signal);
    for (const settled of attempt.settled) this.#settled(settled);
    if (attempt.settled.some((s) => s.ok)) this.#backoff.reset();
    if (!attempt.retry) return;
    // From here the spool path (ordered, with backoff) takes over, these results first in line.
    for (const item of batch.slice(attempt.settled.length)) {
      await this.#spool.append(item);
      this.emit('spooled', { runId: item.result.runId });
    }
  }

  /** Waits out one backoff step, writing results that arrive meanwhile to disk so a crash keeps them. */
  async #waitBackoff(error: Error): Promise<void> {
    const hint = retryHintOf(error);
    const delay = this.#backoff.next(hint);
    this.#log.warn(
      {
        err: error,
        retryInMs: delay,
        unreachable: hint.unreachable,
        spooled: this.#spool.size,
        pending: this.#pending.length,
      },
      'result upload failed; will retry',
    );
    const deadline = Date.now() + delay;
    while (!this.#closing) {
      await this.#persistPending();
      const left = deadline - Date.now();
      if (left <= 0) return;
      await this.#sleep(left);
    }
  }

  async #persistPending(): Promise<void> {
    while (this.#pending.length > 0) {
      const item = this.#pending[0] as SubmitResultRequest;
      await this.#spool.append(item);
      this.#pending.shift();
      this.emit('spooled', { runId: item.result.runId });
    }
  }

  #settled(settled: Settled): void {
    const runId = settled.item.result.runId;
    if (settled.ok) {
      this.#delivered += 1;
      this.#log.debug({ runId, status: settled.status }, 'result delivered');
      this.emit('delivered', { runId, status: settled.status });
    } else {
      this.#rejected += 1;
      this.#log.error(
        { runId, err: settled.error },
        'the service refused the result for good; it is dropped (not retried)',
      );
      this.emit('rejected', { runId, message: settled.error.message });
    }
  }
}
