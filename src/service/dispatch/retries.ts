/**
 * Carries out retry strategies (rules in ../checks/retry-policy.ts, docs/api.md "Retries").
 *
 * When a failed result arrives the dispatcher asks `classify`: if the strategy retries it, the
 * result is stored as an ATTEMPT and a retry is planned (a row in pending_retries, so a restart
 * does not lose it); otherwise it is the FINAL result of its chain. The dispatcher's sweep calls
 * `sweep`, which enqueues the retries that came due as new runs linked to the failed one
 * (runs.retry_of, runs.attempt).
 */
import type { RunResult } from '../../shared/protocol.ts';
import { groupOf } from '../checks/group-of.ts';
import { effectivePlacement } from '../checks/group-merge.ts';
import { effectiveRetryStrategy, isNetworkError, planRetry, retryLocation } from '../checks/retry-policy.ts';
import type { PendingRetry, RunRetryLink } from '../store/check-group-types.ts';
import type { Run, StoredCheck, Store } from '../store/store.ts';
import type { DispatchLog } from './dispatcher.ts';

export type ResultType = 'FINAL' | 'ATTEMPT';

export interface ResultOutcome {
  resultType: ResultType;
  /** Tries behind this result: lease attempts of this run plus the earlier attempts of its chain. */
  attempts: number;
  /** The retry to plan once the result is stored (only with resultType ATTEMPT). */
  retry: PendingRetry | null;
}

/** The dispatcher's view of the retry machinery. */
export interface ResultPolicy {
  /** `link` is the run's place in its retry chain (RunRepo.getManyWithRetryLink reads it with the run). */
  classify(run: Run, link: RunRetryLink, check: StoredCheck, result: RunResult, nowMs: number): Promise<ResultOutcome>;
  /** After the result was stored for the first time (not for a duplicate upload). */
  afterStored(run: Run, outcome: ResultOutcome): Promise<void>;
  /** Enqueues the retries due at `nowMs`. */
  sweep(nowMs: number): Promise<void>;
}

/** Runs of a group trigger are watched: they are never retried and free a slot when they end. */
export interface RunWatcher {
  isTriggered(runId: string): boolean;
  runFinished(runId: string): void;
}

export type EnqueueRun = (check: StoredCheck, locationId: string, dueAtMs: number, link?: RunRetryLink) => Promise<Run>;

export interface RetryCoordinatorOptions {
  store: Store;
  log: DispatchLog;
  enqueue: EnqueueRun;
  watcher?: RunWatcher;
}

const BATCH = 100;
const iso = (ms: number): string => new Date(ms).toISOString();

export class RetryCoordinator implements ResultPolicy {
  readonly #store: Store;
  readonly #log: DispatchLog;
  readonly #enqueue: EnqueueRun;
  readonly #watcher: RunWatcher | undefined;

  constructor(opts: RetryCoordinatorOptions) {
    this.#store = opts.store;
    this.#log = opts.log;
    this.#enqueue = opts.enqueue;
    this.#watcher = opts.watcher;
  }

  async classify(
    run: Run,
    link: RunRetryLink,
    check: StoredCheck,
    result: RunResult,
    nowMs: number,
  ): Promise<ResultOutcome> {
    const final: ResultOutcome = { resultType: 'FINAL', attempts: run.leaseAttempt + link.attempt - 1, retry: null };
    if (!result.hasFailures || result.isCancelled || this.#watcher?.isTriggered(run.runId)) return final;
    const group = await groupOf(this.#store, check);
    const placement = effectivePlacement(check, group);
    if (!placement.activated) return final;
    const strategy = effectiveRetryStrategy(check.body, group?.body as Record<string, unknown> | undefined);
    const chainStartedAt = link.chainStartedAt ?? run.dueAt;
    const plan = planRetry(strategy, {
      attempt: link.attempt,
      chainStartedAtMs: Date.parse(chainStartedAt),
      nowMs,
      networkError: isNetworkError(result),
    });
    const locationId =
      plan && strategy ? retryLocation(strategy.sameRegion, run.locationId, placement.locationIds) : undefined;
    if (!plan || !locationId) return final;
    return {
      ...final,
      resultType: 'ATTEMPT',
      retry: {
        retryOf: run.runId,
        accountId: run.accountId,
        checkId: run.checkId,
        locationId,
        attempt: link.attempt + 1,
        chainStartedAt,
        dueAt: iso(plan.dueAtMs),
      },
    };
  }

  async afterStored(run: Run, outcome: ResultOutcome): Promise<void> {
    if (outcome.retry && (await this.#store.runRetries.plan(outcome.retry))) {
      this.#log.info(
        { checkId: run.checkId, runId: run.runId, attempt: outcome.retry.attempt, dueAt: outcome.retry.dueAt },
        'failed attempt will be retried',
      );
    }
    if (outcome.resultType === 'FINAL') this.#watcher?.runFinished(run.runId);
  }

  async sweep(nowMs: number): Promise<void> {
    for (;;) {
      const due = await this.#store.runRetries.takeDue(iso(nowMs), BATCH);
      for (const retry of due) {
        await this.#launch(retry).catch((err: unknown) =>
          this.#log.error({ err, retryOf: retry.retryOf }, 'retry could not be enqueued'),
        );
      }
      if (due.length < BATCH) return;
    }
  }

  async #launch(retry: PendingRetry): Promise<void> {
    const check = await this.#store.checks.get(retry.accountId, retry.checkId);
    const placement = check && effectivePlacement(check, await groupOf(this.#store, check));
    if (!check || !placement?.activated) {
      this.#log.info(
        { checkId: retry.checkId, retryOf: retry.retryOf },
        'retry dropped: the check was deleted or deactivated',
      );
      return;
    }
    // The check may have moved off the location meanwhile; then it retries where it runs now.
    const locationId = placement.locationIds.includes(retry.locationId) ? retry.locationId : placement.locationIds[0];
    if (!locationId) return;
    await this.#enqueue(check, locationId, Date.parse(retry.dueAt), {
      retryOf: retry.retryOf,
      attempt: retry.attempt,
      chainStartedAt: retry.chainStartedAt,
    });
  }
}
