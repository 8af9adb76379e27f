/**
 * Coordination between replicas of `outpost serve` on one database: who runs the work that must
 * happen once (Leadership), and how a run enqueued on one replica wakes the long-polls held by
 * another (RunSignals). One implementation per backend: in-process (SQLite, one service process) and
 * PostgreSQL (advisory locks, LISTEN/NOTIFY). docs/architecture.md "Replicas and leadership".
 */
import type { Announced } from '../dispatch/waiters.ts';

/** Something to do when leadership changes hands; awaited, one transition after another. */
export type LeadershipCallback = () => Promise<void> | void;

export interface Leadership {
  /** The name replicas compete for. */
  readonly name: string;
  /** Whether this replica leads right now (its onAcquire callbacks ran, its onLose ones have not). */
  readonly isLeader: boolean;
  /** Runs `cb` each time this replica becomes leader: start the leader-only work here. */
  onAcquire(cb: LeadershipCallback): void;
  /**
   * Runs `cb` each time this replica stops leading (lost connection, close): stop that work here.
   * These callbacks finish before the leadership is given up voluntarily; on an involuntary loss
   * the next leader waits out the hand-over delay first (docs/architecture.md).
   */
  onLose(cb: LeadershipCallback): void;
  /** Starts competing for the leadership; resolves once the first attempt was made. */
  start(): Promise<void>;
  /** Stops leading (onLose callbacks first), then gives the leadership up and stops competing. */
  close(): Promise<void>;
}

export interface RunSignalListener {
  /** Runs became claimable at a location, on this replica or on another. */
  announced?(locationId: string, runs: readonly Announced[]): void;
  /** Announcements may have been missed (the signal connection was down): everyone should look again. */
  missed?(): void;
  /** A check was created, changed or deleted on another replica (never called for this replica's own). */
  checkChanged?(accountId: string, checkId: string): void;
  /** Another replica committed work for a leader worker (never called for this replica's own). */
  workQueued?(kind: QueuedWork): void;
}

/** Work committed on one replica that the leader's workers should look at now. */
export type QueuedWork = 'notifications' | 'alerts';

export interface RunSignals {
  /** Tells every replica, this one included, that runs became claimable at `locationId`. */
  announce(locationId: string, runs: readonly Announced[]): void;
  /** Tells the other replicas that a check changed, so the leader's scheduler reloads it. */
  checkChanged(accountId: string, checkId: string): void;
  /** Tells the other replicas that work was committed, so the leader's worker looks now, not at its next poll. */
  workQueued(kind: QueuedWork): void;
  /** Adds a listener; the function returned removes it. */
  subscribe(listener: RunSignalListener): () => void;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Both parts for one service process. */
export interface Coordination {
  leadership: Leadership;
  signals: RunSignals;
  /** Starts signals, then leadership. */
  start(): Promise<void>;
  /** Closes leadership (leader work stops first), then signals. */
  close(): Promise<void>;
}
