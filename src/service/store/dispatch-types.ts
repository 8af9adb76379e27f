/**
 * Repositories of the dispatcher (runs, agents, error reports). Kept apart from store.ts so the
 * dispatcher's persistence can grow without crowding the public API's.
 * Owned by the dispatcher; see docs/protocol.md.
 */
import type { Agent, ErrorReport, Run } from './store.ts';

export interface RunRepo {
  // Filled in by the dispatcher's implementation.
}

export interface AgentRepo {
  // Filled in by the dispatcher's implementation.
}

export interface ErrorReportRepo {
  // Filled in by the dispatcher's implementation.
}

export type { Agent, ErrorReport, Run };
