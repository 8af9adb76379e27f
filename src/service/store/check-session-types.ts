/** Check sessions (migration 031): on-demand runs of one check at each of its locations. */
import type { RunResult } from '../../shared/protocol.ts';
import type { RunState } from './store.ts';

/** Who started a session: the reference's runSource values that Outpost produces. */
export type CheckSessionRunSource = 'TRIGGER_API';

export interface CheckSessionRecord {
  id: string;
  accountId: string;
  checkId: string;
  checkName: string;
  checkType: string;
  runSource: CheckSessionRunSource;
  startedAt: string;
  /** Set by POST /v1/check-sessions/{id}/cancel. */
  cancelledAt: string | null;
}

export interface NewCheckSession extends Omit<CheckSessionRecord, 'cancelledAt'> {
  runs: Array<{ runId: string; locationId: string; runLocation: string }>;
}

/** One run of a session, with what the queue and the results table know of it now. */
export interface CheckSessionRun {
  runId: string;
  locationId: string;
  runLocation: string;
  /** The run's state; null once finished runs were pruned (a day after). */
  state: RunState | null;
  finishedAt: string | null;
  endReason: string | null;
  /** The result stored for the run, if any: its verdict. */
  result: { id: string; createdAt: string; resultType: 'FINAL' | 'ATTEMPT'; payload: RunResult } | null;
}

export interface CheckSessionRepo {
  /** Stores the session and its runs (the runs themselves are enqueued in the same transaction by the caller). */
  create(session: NewCheckSession): Promise<void>;
  /** Account-scoped: another account's session is undefined. */
  get(accountId: string, id: string): Promise<CheckSessionRecord | undefined>;
  /** The session's runs in the order they were made, each with its run state and stored result. */
  runsOf(sessionId: string): Promise<CheckSessionRun[]>;
  /** Records the cancel; false when the session is not the account's. */
  markCancelled(accountId: string, id: string, at: string): Promise<boolean>;
}
