/**
 * Check sessions: on-demand runs (POST /v2/check-sessions/trigger). A session is one check run now
 * at each of its locations; the trigger makes one per matching check. Its runs are queued like any
 * other but claimed first (store/repos/runs.ts), FINAL on their first result (never retried), and
 * their results move no check status and raise no alert (dispatcher.ts #takeResult).
 *
 * A session's state is not stored: it is read from its runs and their stored results each time, so
 * every replica answers the same. Completion requests wait on the dispatcher's SessionWaiters, woken
 * when a result of the session is stored on this replica, and look again at least every
 * FALLBACK_POLL_MS for results stored by another replica or runs that ended without one.
 */
import { randomUUID } from 'node:crypto';
import { effectivePlacement } from '../checks/group-merge.ts';
import { groupOf } from '../checks/group-of.ts';
import type { CheckSessionRecord, CheckSessionRun } from '../store/check-session-types.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import type { Dispatcher } from './dispatcher.ts';

/** The trigger's target filters, as the reference's TriggerCheckSessionTarget defines them. */
export interface SessionTarget {
  /** Checks with one of these ids. */
  checkId?: string[];
  /** OR of AND groups of tags; `!tag` matches checks without it. A group's tags count as its checks'. */
  matchTags?: string[][];
}

/** A session's status in the reference's enum (v1 reports CANCELLED as TIMED_OUT). */
export type SessionStatus =
  | 'STARTED'
  | 'PROGRESS'
  | 'PROGRESS_FAILED'
  | 'PROGRESS_DEGRADED'
  | 'PASSED'
  | 'FAILED'
  | 'DEGRADED'
  | 'TIMED_OUT'
  | 'CANCELLED';

/** One run's verdict: pending until its result is stored or it ended without one. */
export type RunVerdict = 'pending' | 'passed' | 'degraded' | 'failed' | 'timedOut' | 'cancelled';

/** What a session looks like now: the record, its runs, and what follows from them. */
export interface SessionState {
  session: CheckSessionRecord;
  runs: Array<CheckSessionRun & { verdict: RunVerdict }>;
  status: SessionStatus;
  /** Every run has a verdict. */
  done: boolean;
  stoppedAt: string | null;
}

/** How often a held completion request reads the session when nothing woke it. */
export const FALLBACK_POLL_MS = 1000;

const PAGE = 500;

export interface CheckSessionsOptions {
  store: Store;
  dispatcher: Pick<Dispatcher, 'enqueueSession' | 'cancelRun' | 'sessionWaiters'>;
  locationSlug: (locationId: string) => Promise<string>;
  now?: () => number;
}

export class CheckSessions {
  readonly #store: Store;
  readonly #dispatcher: CheckSessionsOptions['dispatcher'];
  readonly #locationSlug: CheckSessionsOptions['locationSlug'];
  readonly #now: () => number;

  constructor(opts: CheckSessionsOptions) {
    this.#store = opts.store;
    this.#dispatcher = opts.dispatcher;
    this.#locationSlug = opts.locationSlug;
    this.#now = opts.now ?? Date.now;
  }

  /** Starts a session for each activated check the target matches; none: an empty list. */
  async trigger(accountId: string, target: SessionTarget): Promise<SessionState[]> {
    const started: SessionState[] = [];
    for (const { check, locationIds } of await this.#matching(accountId, target)) {
      started.push(await this.#start(check, locationIds));
    }
    return started;
  }

  async #start(check: StoredCheck, locationIds: readonly string[]): Promise<SessionState> {
    const id = randomUUID();
    const startedAt = new Date(this.#now()).toISOString();
    const session: CheckSessionRecord = {
      id,
      accountId: check.accountId,
      checkId: check.id,
      checkName: check.name,
      checkType: check.checkType,
      runSource: 'TRIGGER_API',
      startedAt,
      cancelledAt: null,
    };
    const slugs = await Promise.all(locationIds.map((l) => this.#locationSlug(l)));
    const runs = await this.#dispatcher.enqueueSession(check, locationIds, id, async (made) => {
      const rows = made.map((r, i) => ({
        runId: r.runId,
        locationId: r.locationId,
        runLocation: slugs[i] ?? r.locationId,
      }));
      const { cancelledAt: _, ...fields } = session;
      await this.#store.checkSessions.create({ ...fields, runs: rows });
    });
    const sessionRuns = runs.map((r, i) => ({
      runId: r.runId,
      locationId: r.locationId,
      runLocation: slugs[i] ?? r.locationId,
      state: r.state,
      finishedAt: null,
      endReason: null,
      result: null,
      verdict: 'pending' as const,
    }));
    return { session, runs: sessionRuns, status: 'STARTED', done: false, stoppedAt: null };
  }

  /** The activated, runnable checks the target selects, each with the locations it runs at. */
  async #matching(
    accountId: string,
    target: SessionTarget,
  ): Promise<Array<{ check: StoredCheck; locationIds: string[] }>> {
    const out: Array<{ check: StoredCheck; locationIds: string[] }> = [];
    for (const check of await this.#candidates(accountId, target.checkId)) {
      if (check.checkType === 'HEARTBEAT') continue;
      const group = await groupOf(this.#store, check);
      const placement = effectivePlacement(check, group);
      if (!placement.activated || placement.locationIds.length === 0) continue;
      const tags = [...tagsOf(check.body), ...(group ? group.body.tags : [])];
      if (target.matchTags && !tagsMatch(target.matchTags, tags)) continue;
      out.push({ check, locationIds: placement.locationIds });
    }
    return out;
  }

  async #candidates(accountId: string, checkIds: readonly string[] | undefined): Promise<StoredCheck[]> {
    if (checkIds) {
      const found = await Promise.all([...new Set(checkIds)].map((id) => this.#store.checks.get(accountId, id)));
      return found.filter((c): c is StoredCheck => c !== undefined);
    }
    const all: StoredCheck[] = [];
    for (let page = 1; ; page++) {
      const batch = await this.#store.checks.list(accountId, { limit: PAGE, page });
      all.push(...batch);
      if (batch.length < PAGE) return all;
    }
  }

  /** The session as it is now; undefined when the account has no such session. */
  async state(accountId: string, id: string): Promise<SessionState | undefined> {
    const session = await this.#store.checkSessions.get(accountId, id);
    if (!session) return undefined;
    return stateOf(session, await this.#store.checkSessions.runsOf(id));
  }

  /**
   * Waits up to `maxWaitMs` for every run of the session to have a verdict. Resolves with the state
   * at the end (done or not), or undefined when the account has no such session.
   */
  async completion(
    accountId: string,
    id: string,
    maxWaitMs: number,
    signal?: AbortSignal,
  ): Promise<SessionState | undefined> {
    const waiters = this.#dispatcher.sessionWaiters;
    const deadline = performance.now() + maxWaitMs;
    waiters.watch(id);
    try {
      for (let deadlineReached = false; ; ) {
        const seen = waiters.version(id);
        const state = await this.state(accountId, id);
        const remaining = deadline - performance.now();
        if (!state || state.done || deadlineReached || remaining <= 0 || signal?.aborted) return state;
        const waitMs = Math.min(remaining, FALLBACK_POLL_MS);
        const outcome = await waiters.wait(id, seen, waitMs, signal);
        // The client left, or the service is stopping: answer with what there is (a 408 says "ask again").
        if (outcome === 'aborted' || outcome === 'stopped') return state;
        // A timer may fire a little before performance.now() says it is due (libuv's cached loop
        // time): the wait that ran to the deadline ends the request after one last read, with no
        // extra rounds of sub-millisecond waits.
        deadlineReached = outcome === 'timeout' && waitMs === remaining;
      }
    } finally {
      waiters.unwatch(id);
    }
  }

  /**
   * Cancels the session's runs still open (only those of `runIds` when given): a queued run at once,
   * a running one when its agent next heartbeats. Undefined when the account has no such session.
   */
  async cancel(accountId: string, id: string, runIds?: readonly string[]): Promise<SessionState | undefined> {
    const before = await this.state(accountId, id);
    if (!before) return undefined;
    const only = runIds ? new Set(runIds) : undefined;
    for (const run of before.runs) {
      if (run.verdict !== 'pending' || (only && !only.has(run.runId))) continue;
      await this.#dispatcher.cancelRun(accountId, run.runId).catch(() => undefined);
    }
    await this.#store.checkSessions.markCancelled(accountId, id, new Date(this.#now()).toISOString());
    this.#dispatcher.sessionWaiters.notify(id);
    return this.state(accountId, id);
  }
}

function tagsOf(body: Record<string, unknown>): string[] {
  return Array.isArray(body.tags) ? body.tags.filter((t): t is string => typeof t === 'string') : [];
}

/** The reference's matchTags: `[[a, b], [a, c, !d]]` is `(a && b) || (a && c && !d)`. */
export function tagsMatch(matchTags: readonly (readonly string[])[], tags: readonly string[]): boolean {
  const have = new Set(tags);
  return matchTags.some((all) => all.every((tag) => (tag.startsWith('!') ? !have.has(tag.slice(1)) : have.has(tag))));
}

/** One run's verdict from its stored result, else from how its run ended. */
export function verdictOf(run: CheckSessionRun): RunVerdict {
  const r = run.result?.payload;
  if (r) {
    if (r.isCancelled || run.state === 'cancelled') return 'cancelled';
    if (r.hasFailures || r.hasErrors) return 'failed';
    return r.isDegraded ? 'degraded' : 'passed';
  }
  if (run.state === 'queued' || run.state === 'leased') return 'pending';
  // Ended without a result: cancelled, expired in the queue, or pruned a day later.
  return run.state === 'cancelled' ? 'cancelled' : 'timedOut';
}

export function stateOf(session: CheckSessionRecord, rows: readonly CheckSessionRun[]): SessionState {
  const runs = rows.map((r) => ({ ...r, verdict: verdictOf(r) }));
  const verdicts = new Set(runs.map((r) => r.verdict));
  const done = !verdicts.has('pending');
  const has = (v: RunVerdict) => verdicts.has(v);
  let status: SessionStatus;
  if (done) {
    status = has('cancelled')
      ? 'CANCELLED'
      : has('failed')
        ? 'FAILED'
        : has('timedOut')
          ? 'TIMED_OUT'
          : has('degraded')
            ? 'DEGRADED'
            : 'PASSED';
  } else if (runs.every((r) => r.verdict === 'pending')) {
    status = 'STARTED';
  } else {
    status =
      has('failed') || has('timedOut') || has('cancelled')
        ? 'PROGRESS_FAILED'
        : has('degraded')
          ? 'PROGRESS_DEGRADED'
          : 'PROGRESS';
  }
  const ends = runs.map((r) => r.result?.createdAt ?? r.finishedAt ?? session.startedAt);
  // ISO times of one format sort as they happen: the last is when the session stopped.
  const stoppedAt = done ? ([session.startedAt, ...ends].sort().at(-1) ?? null) : null;
  return { session, runs, status, done, stoppedAt };
}
