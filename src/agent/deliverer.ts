import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { SubmitResultRequest, SubmitResultResponse } from '../shared/protocol.ts';
import { Backoff, type BackoffOptions, DELIVERY_BACKOFF } from './backoff.ts';
import { PermanentError, retryHintOf, type ServiceApi } from './client.ts';
import type { ResultSpool } from './spool.ts';

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
 * A `duplicate`
 * answer counts as delivered: the service is idempotent by runId, so a crash between upload and ack
 * just means the next start uploads the same result again and the service says "duplicate".
 *
 * Events: 'delivered' ({runId, status}), 'spooled' ({runId}), 'rejected' ({runId, message}).
 */
export interface DelivererOptions {
  client: Pick<ServiceApi, 'submitResult'>;
  spool: ResultSpool;
  log: Logger;
  backoff?: BackoffOptions;
}

/** Uploads in flight while the service answers; enough to keep up with a busy agent on one connection pool. */
export const LIVE_UPLOADS = 8;

type Attempt = { ok: true; status: SubmitResultResponse['status'] } | { ok: false; permanent: boolean; error: Error };

export class ResultDeliverer extends EventEmitter {
  readonly #client: Pick<ServiceApi, 'submitResult'>;
  readonly #spool: ResultSpool;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  readonly #pending: SubmitResultRequest[] = [];
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
    this.#client = options.client;
    this.#spool = options.spool;
    this.#log = options.log;
    this.#backoff = new Backoff(options.backoff ?? DELIVERY_BACKOFF);
  }

  /** Results waiting in memory (not yet on disk). */
  get pending(): number {
    return this.#pending.length;
  }

  /** Results the service refused for good (4xx other than 401), dropped after an error log. */
  get rejectedTotal(): number {
    return this.#rejected;
  }

  get deliveredTotal(): number {
    return this.#delivered;
  }

  /** Starts draining whatever an earlier process left in the spool. */
  start(): void {
    this.#worker ??= this.#run().catch((err: unknown) => {
      this.#log.error({ err }, 'result deliverer stopped unexpectedly');
    });
  }

  deliver(item: SubmitResultRequest): void {
    if (this.#closing) {
      // Late results after close() still must not be lost: they go straight to the pending list
      // which drainOnce() persists.
      this.#pending.push(item);
      return;
    }
    this.#pending.push(item);
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
   * At shutdown: persist what is pending, then try each spooled result once, in order, stopping at
   * the first failure. Whatever is left stays on disk for the next start.
   */
  async drainOnce(timeoutMs = 10_000): Promise<void> {
    await this.#persistPending();
    const signal = AbortSignal.timeout(timeoutMs);
    for (;;) {
      if (signal.aborted) break;
      const entry = await this.#spool.peek();
      if (!entry) break;
      const attempt = await this.#attempt(entry.item, signal);
      if (!attempt.ok && !attempt.permanent) break;
      await this.#spool.ack(entry.seq);
      this.#settled(entry.item, attempt);
    }
    if (this.#spool.size > 0) {
      this.#log.warn({ spooled: this.#spool.size }, 'results left in the spool; they are sent at the next start');
    }
  }

  async #run(): Promise<void> {
    while (!this.#closing) {
      if (this.#spool.size > 0) {
        await this.#persistPending();
        const entry = await this.#spool.peek();
        if (!entry) continue;
        const attempt = await this.#attempt(entry.item, this.#abort.signal);
        if (this.#closing && !attempt.ok && !attempt.permanent) return;
        if (attempt.ok || attempt.permanent) {
          await this.#spool.ack(entry.seq);
          this.#settled(entry.item, attempt);
          this.#backoff.reset();
        } else {
          await this.#waitBackoff(attempt.error);
        }
        continue;
      }
      if (this.#pending.length > 0 && this.#inFlight.size < LIVE_UPLOADS) {
        const head = this.#pending.shift() as SubmitResultRequest;
        const upload: Promise<void> = this.#uploadLive(head).finally(() => {
          this.#inFlight.delete(upload);
          this.#wake?.();
        });
        this.#inFlight.add(upload);
        continue;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }

  /** One fresh result straight to the service; on a transient failure it goes to the spool. */
  async #uploadLive(item: SubmitResultRequest): Promise<void> {
    const attempt = await this.#attempt(item, this.#abort.signal);
    if (attempt.ok || attempt.permanent) {
      this.#settled(item, attempt);
      if (attempt.ok) this.#backoff.reset();
      return;
    }
    // From here the spool path (ordered, with backoff) takes over, this result first in line.
    await this.#spool.append(item);
    this.emit('spooled', { runId: item.result.runId });
  }

  /** Waits out one backoff step, writing results that arrive meanwhile to disk so a crash keeps them. */
  async #waitBackoff(error: Error): Promise<void> {
    const hint = retryHintOf(error);
    const delay = this.#backoff.next(hint);
    this.#log.warn(
      { err: error, retryInMs: delay, unreachable: hint.unreachable, spooled: this.#spool.size, pending: this.#pending.length },
      'result upload failed; will retry',
    );
    const deadline = Date.now() + delay;
    while (!this.#closing) {
      await this.#persistPending();
      const left = deadline - Date.now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
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

  async #attempt(item: SubmitResultRequest, signal: AbortSignal): Promise<Attempt> {
    try {
      const res = await this.#client.submitResult(item, signal);
      return { ok: true, status: res?.status ?? 'stored' };
    } catch (err) {
      // 401 is not permanent for a result: the key may be replaced and the result is still good.
      return { ok: false, permanent: err instanceof PermanentError, error: err as Error };
    }
  }

  #settled(item: SubmitResultRequest, attempt: Attempt): void {
    const runId = item.result.runId;
    if (attempt.ok) {
      this.#delivered += 1;
      this.#log.debug({ runId, status: attempt.status }, 'result delivered');
      this.emit('delivered', { runId, status: attempt.status });
    } else {
      this.#rejected += 1;
      this.#log.error(
        { runId, err: attempt.error },
        'the service refused the result for good; it is dropped (not retried)',
      );
      this.emit('rejected', { runId, message: attempt.error.message });
    }
  }
}
