import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { SubmitResultRequest, SubmitResultResponse } from '../shared/protocol.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import { PermanentError, type ServiceApi } from './client.ts';
import type { ResultSpool } from './spool.ts';

/**
 * The single deliverer of results: one upload at a time, strictly in the order results were handed
 * in. Results not yet on disk wait in `#pending` (newest last); results that failed to upload sit in
 * the spool (oldest). Invariant: everything in the spool is older than everything pending, and only
 * the worker moves items from the front of #pending to the back of the spool, so order holds.
 *
 * While anything is spooled, new results are written behind it rather than sent first. A `duplicate`
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

type Attempt = { ok: true; status: SubmitResultResponse['status'] } | { ok: false; permanent: boolean; error: Error };

export class ResultDeliverer extends EventEmitter {
  readonly #client: Pick<ServiceApi, 'submitResult'>;
  readonly #spool: ResultSpool;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  readonly #pending: SubmitResultRequest[] = [];
  #wake: (() => void) | undefined;
  #worker: Promise<void> | undefined;
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
    this.#backoff = new Backoff(options.backoff ?? { baseMs: 500, capMs: 30_000 });
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
      const head = this.#pending[0];
      if (head) {
        const attempt = await this.#attempt(head, this.#abort.signal);
        if (this.#closing && !attempt.ok && !attempt.permanent) return;
        this.#pending.shift();
        if (attempt.ok || attempt.permanent) {
          this.#settled(head, attempt);
          this.#backoff.reset();
        } else {
          await this.#spool.append(head);
          this.emit('spooled', { runId: head.result.runId });
          await this.#waitBackoff(attempt.error);
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }

  /** Waits out one backoff step, writing results that arrive meanwhile to disk so a crash keeps them. */
  async #waitBackoff(error: Error): Promise<void> {
    const delay = this.#backoff.next();
    this.#log.warn(
      { err: error, retryInMs: delay, spooled: this.#spool.size, pending: this.#pending.length },
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
