import type { ResultOutcome, SubmitResultRequest } from '../shared/protocol.ts';
import { PermanentError, type ServiceApi, TransientError } from './client.ts';

/** Where one result ended up: with the service (stored or duplicate), or refused for good. */
export type Settled =
  | { item: SubmitResultRequest; ok: true; status: 'stored' | 'duplicate' }
  | { item: SubmitResultRequest; ok: false; error: Error };

/**
 * The answer to one send: `settled` covers the first results sent, in order; when `retry` is set,
 * the rest were not delivered and must be sent again (the service is idempotent per run id).
 */
export interface SendAttempt {
  settled: Settled[];
  retry?: Error;
}

export type ResultClient = Pick<ServiceApi, 'submitResult' | 'submitResultBatch'>;

/**
 * Sends results the way the service takes them: one per `results` call, or, once the service said
 * at registration how many a `result-batches` call may carry, several per call.
 */
export class ResultSender {
  readonly #client: ResultClient;
  /** 1: one result per `results` call (a service that did not offer batches). */
  #batchMax = 1;

  constructor(client: ResultClient) {
    this.#client = client;
  }

  /** The most results one call carries. */
  get batchMax(): number {
    return this.#batchMax;
  }

  /** From the registration answer's `resultBatchMax`; undefined keeps single calls. */
  useBatches(resultBatchMax: number | undefined): void {
    this.#batchMax =
      resultBatchMax !== undefined && Number.isInteger(resultBatchMax) && resultBatchMax > 1 ? resultBatchMax : 1;
  }

  /**
   * How many of `items` (oldest first) go in one call: up to batchMax, and only those of the first
   * one's agentId, because a batch names one (the spool may hold results of an earlier process).
   */
  takeCount(items: readonly SubmitResultRequest[]): number {
    const agentId = items[0]?.agentId;
    let n = 0;
    while (n < items.length && n < this.#batchMax && items[n]?.agentId === agentId) n++;
    return n;
  }

  async send(items: SubmitResultRequest[], signal: AbortSignal): Promise<SendAttempt> {
    if (this.#batchMax === 1) return this.#sendSingly(items, signal);
    try {
      const res = await this.#client.submitResultBatch(
        {
          agentId: (items[0] as SubmitResultRequest).agentId,
          results: items.map(({ leaseId, result }) => ({ leaseId, result })),
        },
        signal,
      );
      return settleOutcomes(items, res?.outcomes);
    } catch (err) {
      // The batch as a whole was refused (too large, or one malformed result): one call each
      // tells which result is at fault, and the others still get through.
      if (err instanceof PermanentError) return this.#sendSingly(items, signal);
      return { settled: [], retry: err as Error };
    }
  }

  /** One `results` call each, in order, stopping at the first that may succeed later. */
  async #sendSingly(items: SubmitResultRequest[], signal: AbortSignal): Promise<SendAttempt> {
    const settled: Settled[] = [];
    for (const item of items) {
      try {
        const res = await this.#client.submitResult(item, signal);
        settled.push({ item, ok: true, status: res?.status ?? 'stored' });
      } catch (err) {
        // 401 is not permanent for a result: the key may be replaced and the result is still good.
        if (!(err instanceof PermanentError)) return { settled, retry: err as Error };
        settled.push({ item, ok: false, error: err });
      }
    }
    return { settled };
  }
}

/** Matches the answer's outcomes to the results sent (by run id); a missing one is retried. */
function settleOutcomes(items: SubmitResultRequest[], outcomes: ResultOutcome[] | undefined): SendAttempt {
  const byRun = new Map((Array.isArray(outcomes) ? outcomes : []).map((o) => [o.runId, o]));
  const settled: Settled[] = [];
  for (const item of items) {
    const runId = item.result.runId;
    const outcome = byRun.get(runId);
    if (outcome?.status === 'stored' || outcome?.status === 'duplicate') {
      settled.push({ item, ok: true, status: outcome.status });
    } else if (outcome?.status === 'unknown') {
      // What a single `results` call answers with 404: final, the result is dropped.
      settled.push({
        item,
        ok: false,
        error: new PermanentError(`result-batches: run ${runId} is unknown to the service`, 404),
      });
    } else {
      return { settled, retry: new TransientError(`result-batches: the answer has no outcome for run ${runId}`, 200) };
    }
  }
  return { settled };
}
