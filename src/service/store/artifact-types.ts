/**
 * Artifact metadata: one row per (run, name) an agent uploads. The bytes live in an ArtifactStore
 * (src/service/artifacts/store.ts); these rows say what they are and whether they are complete.
 */
import type { ArtifactKind } from '../../shared/artifacts.ts';

export interface ArtifactRecord {
  accountId: string;
  runId: string;
  name: string;
  locationId: string;
  checkId: string;
  kind: ArtifactKind;
  contentType: string;
  /** Declared total size in bytes. */
  size: number;
  /** Lowercase hex SHA-256 the agent declared; verified before `complete` is set. */
  sha256: string;
  complete: boolean;
  createdAt: string;
  completedAt: string | null;
}

/** Who a run belongs to, from its run row or (after runs are pruned) its stored result. */
export interface RunOwner {
  accountId: string;
  locationId: string;
  checkId: string;
}

/** The result an asset manifest is asked about. */
export interface ResultRunRef {
  runId: string;
  checkId: string;
  checkName: string;
  checkType: string;
  resultId: string;
}

export interface ArtifactRepo {
  /** Run owner by run id (not account-scoped: the agent API checks the location against it). */
  runOwner(runId: string): Promise<RunOwner | undefined>;
  /** The run behind a stored result of the account's check; undefined for another account's. */
  resultRun(accountId: string, checkId: string, resultId: string): Promise<ResultRunRef | undefined>;
  /** Creates or replaces (a restarted upload) the row for (runId, name), incomplete. */
  begin(record: Omit<ArtifactRecord, 'complete' | 'createdAt' | 'completedAt'>): Promise<ArtifactRecord>;
  get(accountId: string, runId: string, name: string): Promise<ArtifactRecord | undefined>;
  markComplete(accountId: string, runId: string, name: string): Promise<void>;
  remove(accountId: string, runId: string, name: string): Promise<void>;
  /** Complete artifacts of a run, oldest first. */
  listComplete(accountId: string, runId: string): Promise<ArtifactRecord[]>;
  /**
   * Runs whose artifacts are past retention: the check (and so its results) was deleted, or the
   * run has no result and no run row any more (pruned), or an upload stayed incomplete since before
   * `incompleteBefore`. At most `limit` (accountId, runId, name) triples.
   */
  listExpired(
    incompleteBefore: string,
    limit: number,
  ): Promise<Array<{ accountId: string; runId: string; name: string }>>;
}
