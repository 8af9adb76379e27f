/**
 * POST /agent/v1/result-batches (docs/protocol.md "Result batches"): several results in one call and
 * one store transaction, each treated as POST /agent/v1/results treats it. A real service on
 * loopback over each store backend.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_PATHS, type Job, type ResultOutcome, type RunResult } from '../../src/shared/protocol.ts';
import { type Harness, resultFor, startHarness, type TestAgent, type TestTenant } from '../helpers/dispatch-harness.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { type FreshStore, storeBackends } from '../support/store-backends.ts';

describe.each(storeBackends())('result batches ($name)', (backend) => {
  const fresh = freshDatabaseEachTest(backend);
  let h: Harness;

  afterEach(async () => {
    await h?.close();
  });

  async function start(): Promise<{ t: TestTenant; agent: TestAgent }> {
    h = await startHarness({ listen: true, openStore: () => fresh.open() });
    const t = await h.tenant();
    return { t, agent: await h.agent(t) };
  }

  /** Leases `n` runs, one per check (a run per check and due time). */
  async function leased(t: TestTenant, agent: TestAgent, n: number): Promise<Job[]> {
    for (let i = 0; i < n; i++)
      await h.dispatcher.enqueue(await h.check(t, { name: `check ${i}` }), t.location.id, h.clock.now);
    const jobs = await agent.lease({ slots: { uptime: n } });
    expect(jobs).toHaveLength(n);
    return jobs;
  }

  /** Posts over loopback with the location key, as an agent does. */
  async function post(
    key: string,
    path: string,
    body: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(new URL(path, h.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  async function batch(t: TestTenant, agent: TestAgent, items: Array<{ job: Job; result?: Partial<RunResult> }>) {
    const results = items.map(({ job, result }) => ({
      leaseId: job.leaseId,
      result: resultFor(job, agent.agentId, result),
    }));
    return post(t.key, AGENT_PATHS.resultBatches, { agentId: agent.agentId, results });
  }

  async function resultsOf(runId: string): Promise<Array<Record<string, unknown>>> {
    return fresh.query('SELECT id FROM results WHERE run_id = ?', [runId]);
  }

  it('is advertised at registration with its limit', async () => {
    const { agent } = await start();
    expect(agent.registration.resultBatchMax).toBe(100);
  });

  it('stores each result once, finishes its run and applies it to its check status, answering one outcome per result in order', async () => {
    const { t, agent } = await start();
    const jobs = await leased(t, agent, 3);
    const res = await batch(t, agent, [
      { job: jobs[0]! },
      { job: jobs[1]!, result: { hasFailures: true } },
      { job: jobs[2]! },
    ]);
    expect(res.status).toBe(200);
    const outcomes = res.json.outcomes as ResultOutcome[];
    expect(outcomes.map((o) => [o.runId, o.status])).toEqual(jobs.map((j) => [j.runId, 'stored']));
    for (const [i, job] of jobs.entries()) {
      const stored = await resultsOf(job.runId);
      expect(stored).toEqual([{ id: (outcomes[i] as { resultId: string }).resultId }]);
      expect((await h.store.runs.get(job.runId))?.state).toBe('completed');
      expect((await h.store.checkStatuses.get(t.accountId, job.check.id))?.hasFailures).toBe(i === 1);
    }
  });

  it('answers duplicate with the stored id for a run sent twice in one batch and again in a later batch', async () => {
    const { t, agent } = await start();
    const [a, b] = await leased(t, agent, 2);
    const first = (await batch(t, agent, [{ job: a! }, { job: a! }])).json.outcomes as Array<
      ResultOutcome & { resultId: string }
    >;
    expect(first.map((o) => o.status)).toEqual(['stored', 'duplicate']);
    expect(first[1]?.resultId).toBe(first[0]?.resultId);

    const second = (await batch(t, agent, [{ job: b! }, { job: a! }])).json.outcomes as Array<
      ResultOutcome & { resultId: string }
    >;
    expect(second.map((o) => o.status)).toEqual(['stored', 'duplicate']);
    expect(second[1]?.resultId).toBe(first[0]?.resultId);
    expect(await resultsOf(a!.runId)).toHaveLength(1);
    // A single results call sees the batch's result as stored already.
    expect((await agent.submit(a!)).json()).toEqual({ status: 'duplicate', resultId: first[0]?.resultId });
  });

  it('answers unknown for a run nobody created, a run of another location and a run whose check was deleted, and stores the rest', async () => {
    const { t, agent } = await start();
    const [mine, orphan] = await leased(t, agent, 2);
    const other = await h.tenant('Other');
    const otherAgent = await h.agent(other);
    const [theirs] = await leased(other, otherAgent, 1);
    await h.store.checks.delete(t.accountId, orphan!.check.id);
    const nobody: Job = { ...mine!, runId: crypto.randomUUID() };

    const res = await batch(t, agent, [{ job: nobody }, { job: theirs! }, { job: orphan! }, { job: mine! }]);
    expect(res.status).toBe(200);
    expect((res.json.outcomes as ResultOutcome[]).map((o) => [o.runId, o.status])).toEqual([
      [nobody.runId, 'unknown'],
      [theirs!.runId, 'unknown'],
      [orphan!.runId, 'unknown'],
      [mine!.runId, 'stored'],
    ]);
    expect(await resultsOf(theirs!.runId)).toEqual([]);
    expect((await h.store.runs.get(theirs!.runId))?.state).toBe('leased');
    expect((await h.store.runs.get(orphan!.runId))?.state).toBe('completed');
    // The single call answers 404 for exactly these.
    expect((await agent.submit(theirs!)).statusCode).toBe(404);
  });

  it('stores the result of a run cancelled while it ran and leaves the run cancelled', async () => {
    const { t, agent } = await start();
    const [job] = await leased(t, agent, 1);
    await h.dispatcher.cancelRun(t.accountId, job!.runId);
    const res = await batch(t, agent, [{ job: job!, result: { isCancelled: true, error: 'cancelled' } }]);
    expect((res.json.outcomes as ResultOutcome[]).map((o) => o.status)).toEqual(['stored']);
    expect((await h.store.runs.get(job!.runId))?.state).toBe('cancelled');
    expect(await h.store.checkStatuses.get(t.accountId, job!.check.id)).toBeUndefined();
  });

  it('refuses a batch over resultBatchMax, an empty one and an invalid item with a 400 naming the field, storing nothing', async () => {
    const { t, agent } = await start();
    const [job] = await leased(t, agent, 1);
    const item = { leaseId: job!.leaseId, result: resultFor(job!, agent.agentId) };

    const over = await post(t.key, AGENT_PATHS.resultBatches, {
      agentId: agent.agentId,
      results: Array.from({ length: 101 }, () => item),
    });
    expect(over.status).toBe(400);
    expect(over.json.message).toMatch(/body\/results must NOT have more than 100 items/);

    const empty = await post(t.key, AGENT_PATHS.resultBatches, { agentId: agent.agentId, results: [] });
    expect(empty.status).toBe(400);
    expect(empty.json.message).toMatch(/body\/results must NOT have fewer than 1 items/);

    const { responseTime: _, ...noTime } = item.result;
    const invalid = await post(t.key, AGENT_PATHS.resultBatches, {
      agentId: agent.agentId,
      results: [item, { leaseId: job!.leaseId, result: noTime }],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.json.message).toMatch(/body\/results\/1\/result\/responseTime is required/);
    expect(await resultsOf(job!.runId)).toEqual([]);
  });

  it('stores a batch in one transaction: a failure mid-batch stores nothing, and the retried batch stores each result once', async () => {
    const { t, agent } = await start();
    const jobs = await leased(t, agent, 3);
    const failing = jobs[1]!.runId;
    await injectInsertFailure(fresh, backend.name, 'results', 'run_id', failing);

    const failed = await batch(
      t,
      agent,
      jobs.map((job) => ({ job })),
    );
    expect(failed.status).toBe(500);
    for (const job of jobs) {
      expect(await resultsOf(job.runId)).toEqual([]);
      expect((await h.store.runs.get(job.runId))?.state).toBe('leased');
    }

    await removeInsertFailure(fresh, backend.name, 'results');
    const retried = await batch(
      t,
      agent,
      jobs.map((job) => ({ job })),
    );
    expect((retried.json.outcomes as ResultOutcome[]).map((o) => o.status)).toEqual(['stored', 'stored', 'stored']);
    const again = await batch(
      t,
      agent,
      jobs.map((job) => ({ job })),
    );
    expect((again.json.outcomes as ResultOutcome[]).map((o) => o.status)).toEqual([
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    for (const job of jobs) expect(await resultsOf(job.runId)).toHaveLength(1);
  });

  it('applies the statuses of a batch together, and when one cannot be updated still applies the others and keeps the results', async () => {
    const { t, agent } = await start();
    const jobs = await leased(t, agent, 3);
    const broken = jobs[1]!.check.id;
    await injectInsertFailure(fresh, backend.name, 'check_statuses', 'check_id', broken);

    const res = await batch(
      t,
      agent,
      jobs.map((job) => ({ job, result: { hasFailures: true } })),
    );
    expect((res.json.outcomes as ResultOutcome[]).map((o) => o.status)).toEqual(['stored', 'stored', 'stored']);
    for (const job of jobs) {
      expect(await resultsOf(job.runId)).toHaveLength(1);
      const status = await h.store.checkStatuses.get(t.accountId, job.check.id);
      expect(status?.hasFailures).toBe(job.check.id === broken ? undefined : true);
    }
    // The broken one is left pending, for the sweep to replay.
    const pending = await h.store.results.listStatusPending({ limit: 10 });
    expect(pending.map((r) => r.checkId)).toEqual([broken]);
  });
});

/** A trigger that makes the database refuse rows of `table` whose `column` is `value`: a real failure inside the transaction. */
async function injectInsertFailure(
  fresh: FreshStore,
  backend: 'sqlite' | 'postgres',
  table: string,
  column: string,
  value: string,
): Promise<void> {
  if (backend === 'sqlite') {
    await fresh.query(
      `CREATE TRIGGER fail_insert BEFORE INSERT ON ${table} WHEN NEW.${column} = '${value}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
    );
    return;
  }
  await fresh.query(
    `CREATE FUNCTION fail_insert() RETURNS trigger AS $$ BEGIN IF NEW.${column} = '${value}' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
  );
  await fresh.query(`CREATE TRIGGER fail_insert BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION fail_insert()`);
}

async function removeInsertFailure(fresh: FreshStore, backend: 'sqlite' | 'postgres', table: string): Promise<void> {
  if (backend === 'sqlite') {
    await fresh.query('DROP TRIGGER fail_insert');
    return;
  }
  await fresh.query(`DROP TRIGGER fail_insert ON ${table}`);
  await fresh.query('DROP FUNCTION fail_insert()');
}
