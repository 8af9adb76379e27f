/** Shared by the alerting tests over the dispatch harness: one run answered, and a check's alert history. */
import type { CheckAlertRecord } from '../../src/service/store/check-status-types.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import type { Harness, TestAgent } from './dispatch-harness.ts';

/** Enqueues a run of `check` at the agent's location now (the harness clock), leases it and submits `result`. */
export async function answerRun(
  h: Harness,
  agent: TestAgent,
  check: StoredCheck,
  result: Partial<RunResult>,
): Promise<void> {
  await h.dispatcher.enqueue(check, agent.registration.location.id, h.clock.now);
  const [job] = await agent.lease();
  if (!job) throw new Error('no job to answer');
  const res = await agent.submit(job, result);
  if (res.statusCode !== 200) throw new Error(`submit failed: ${res.statusCode} ${res.body}`);
}

/** Every alert of the check, oldest first. */
export async function alertHistory(store: Store, accountId: string, checkId: string): Promise<CheckAlertRecord[]> {
  const all = await store.checkAlerts.list(accountId, {
    checkId,
    from: new Date(0).toISOString(),
    to: '9999-01-01T00:00:00.000Z',
    limit: 100,
    page: 1,
  });
  return all.reverse();
}
