/** What replicas NOTIFY each other (postgres-signals.ts); checked on receipt, since anyone may NOTIFY. */
import { Type } from 'typebox';
import { CHECK_TYPES } from '../../shared/checks/types.ts';

export const RUNS_CHANNEL = 'outpost_runs';
export const CHECKS_CHANNEL = 'outpost_checks';
export const WORK_CHANNEL = 'outpost_work';

/** Runs became claimable at a location: one entry per kind of run, enough to wake the right waiters. */
export const RunsPayload = Type.Object({
  origin: Type.String(),
  locationId: Type.String(),
  runs: Type.Array(Type.Object({ checkType: Type.Enum([...CHECK_TYPES]), checkClass: Type.Enum(['uptime', 'heavy']) })),
});

/** A check was created, changed or deleted. */
export const ChecksPayload = Type.Object({ origin: Type.String(), accountId: Type.String(), checkId: Type.String() });

/** Work was committed for a leader worker. */
export const WorkPayload = Type.Object({ origin: Type.String(), kind: Type.Enum(['notifications', 'alerts']) });
