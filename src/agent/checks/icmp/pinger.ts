/**
 * What the ICMP runner needs from whatever sends its echo requests: the persistent helper
 * (helper-client.ts, ICMP_HELPER_PATH) or fping batches (fping.ts).
 */
import type { ChildProcess } from 'node:child_process';

export type Family = 4 | 6;

/** Where a pinger starts its process; tests pass a wrapper that counts or re-users spawns. */
export type Spawn = (file: string, args: readonly string[]) => ChildProcess;

/** This agent cannot send or receive echo requests (no binary, no socket, the helper gone). */
export class IcmpUnavailableError extends Error {
  override readonly name = 'IcmpUnavailableError';
}

/**
 * The pinger's process stopped or could not start. Unlike a missing socket this may pass: the
 * next ping starts it again, so the runner does not remember it as the agent's state.
 */
export class IcmpHelperStoppedError extends IcmpUnavailableError {}

export interface PingRequest {
  address: string;
  family: Family;
  count: number;
  signal?: AbortSignal;
}

export interface Pinger {
  /** Who pings, for messages: "fping" or "the ICMP helper". */
  readonly label: string;
  /** Processes started so far (tests and the benchmark count them). */
  readonly spawned: number;
  /** Round-trip times in ms, one per echo request, null for a lost one. Rejects with IcmpUnavailableError. */
  ping(req: PingRequest): Promise<Array<number | null>>;
  /** Stops the processes (agent shutdown); requests in flight are rejected. */
  close(): void;
}
