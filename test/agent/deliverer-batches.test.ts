/**
 * Result batches: the deliverer with the real ServiceClient against a loopback service that speaks
 * the documented protocol (test/agent/protocol-stub.ts), with and without `resultBatchMax`.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/agent/client.ts';
import { ResultDeliverer } from '../../src/agent/deliverer.ts';
import { ResultSpool } from '../../src/agent/spool.ts';
import { AGENT_PATHS } from '../../src/shared/protocol.ts';
import { passingOutcome } from '../support/passing-outcome.ts';
import { recordingLogger, submitRequest as item, tempDir } from './helpers.ts';
import { makeJob, ProtocolStub, type StubOptions } from './protocol-stub.ts';
import { type Cleanups, startStubDaemon } from './stub-daemon.ts';

const cleanups: Cleanups = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function setup(stubOptions: StubOptions = { resultBatchMax: 50 }) {
  const stub = await ProtocolStub.start(stubOptions);
  cleanups.push(() => stub.close());
  const client = new ServiceClient({ apiUrl: new URL(stub.url), apiKey: 'pl_batch_test_key' });
  cleanups.push(() => client.close());
  const recorder = recordingLogger();
  const spool = await ResultSpool.open({ dir: tempDir('batches'), maxBytes: 1 << 22, log: recorder.log });
  const deliverer = new ResultDeliverer({ client, spool, log: recorder.log, backoff: { baseMs: 1, capMs: 5 } });
  cleanups.push(() => deliverer.close());
  // What the daemon does with the registration answer.
  deliverer.useBatches(stubOptions.resultBatchMax);
  return { stub, spool, deliverer, recorder };
}

/** Resolves with the run ids of the first `n` settled results (delivered or rejected), in order. */
function settled(deliverer: ResultDeliverer, n: number): Promise<{ delivered: string[]; rejected: string[] }> {
  const out = { delivered: [] as string[], rejected: [] as string[] };
  return new Promise((resolve) => {
    const check = () => out.delivered.length + out.rejected.length === n && resolve(out);
    deliverer.on('delivered', ({ runId }) => {
      out.delivered.push(runId);
      check();
    });
    deliverer.on('rejected', ({ runId }) => {
      out.rejected.push(runId);
      check();
    });
  });
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('ResultDeliverer with result batches', () => {
  it('sends results that finish together in one result-batches call, and no more than resultBatchMax in one', async () => {
    const { stub, deliverer } = await setup({ resultBatchMax: 50 });
    const runs = ids('r', 120);
    const done = settled(deliverer, 120);
    for (const runId of runs) deliverer.deliver(item(runId));
    expect((await done).delivered.sort()).toEqual([...runs].sort());
    expect(stub.batchAttempts.map((b) => b.length)).toEqual([50, 50, 20]);
    expect(stub.batchAttempts.flat()).toEqual(runs);
    expect(stub.resultAttempts).toEqual([]);
    expect(stub.stored.map((r) => r.runId)).toEqual(runs);
  });

  it('sends one result per results call to a service that offers no batches', async () => {
    const { stub, deliverer } = await setup({});
    const done = settled(deliverer, 3);
    for (const runId of ids('s', 3)) deliverer.deliver(item(runId));
    await done;
    expect(deliverer.batchMax).toBe(1);
    expect(stub.batchAttempts).toEqual([]);
    expect(stub.resultAttempts.sort()).toEqual(ids('s', 3));
  });

  it('retries a failed batch whole, from the spool, and each result is stored once in order', async () => {
    const { stub, deliverer } = await setup();
    stub.failWith.set(AGENT_PATHS.resultBatches, 503);
    const runs = ids('f', 5);
    for (const runId of runs) deliverer.deliver(item(runId));
    await stub.until(() => stub.batchAttempts.length >= 1);
    stub.failWith.delete(AGENT_PATHS.resultBatches);
    const done = settled(deliverer, 5);
    expect((await done).delivered).toEqual(runs);
    expect(stub.batchAttempts.at(-1)).toEqual(runs);
    expect(stub.batchAttempts.every((b) => b.join() === runs.join())).toBe(true);
    expect(stub.stored.map((r) => r.runId)).toEqual(runs);
  });

  it('spools while the service is away and drains the spool in order, in batches, when it is back', async () => {
    const { stub, spool, deliverer } = await setup({ resultBatchMax: 4 });
    await stub.stop();
    const first = ids('a', 3);
    for (const runId of first) deliverer.deliver(item(runId));
    while (spool.size < 3) await once(deliverer, 'spooled');
    // Arriving during the outage: queued behind the spooled ones, on disk too.
    const later = ids('b', 3);
    for (const runId of later) deliverer.deliver(item(runId));
    while (spool.size < 6) await once(deliverer, 'spooled');
    const done = settled(deliverer, 6);
    await stub.restart();
    expect((await done).delivered).toEqual([...first, ...later]);
    expect(stub.stored.map((r) => r.runId)).toEqual([...first, ...later]);
    expect(stub.batchAttempts.map((b) => b.length)).toEqual([4, 2]);
    expect(spool.size).toBe(0);
  });

  it('drops a result whose outcome is unknown, as a 404 to a single result, and keeps the others', async () => {
    const { stub, deliverer, recorder } = await setup();
    stub.unknownRuns.add('u1');
    const done = settled(deliverer, 3);
    for (const runId of ids('u', 3)) deliverer.deliver(item(runId));
    const out = await done;
    expect(out.rejected).toEqual(['u1']);
    expect(out.delivered).toEqual(['u0', 'u2']);
    expect(deliverer.rejectedTotal).toBe(1);
    expect(stub.batchAttempts).toHaveLength(1);
    const line = recorder.lines.find((l) => l.runId === 'u1');
    expect(line?.msg).toMatch(/refused the result for good/);
  });

  it('falls back to one call per result when the service refuses a batch as a whole', async () => {
    const { stub, deliverer } = await setup();
    stub.failWith.set(AGENT_PATHS.resultBatches, 400);
    const done = settled(deliverer, 3);
    for (const runId of ids('p', 3)) deliverer.deliver(item(runId));
    expect((await done).delivered).toEqual(ids('p', 3));
    expect(stub.batchAttempts).toHaveLength(1);
    expect(stub.resultAttempts).toEqual(ids('p', 3));
  });

  it('at shutdown, a batch still gathering is delivered by the drain', async () => {
    const { stub, spool, deliverer } = await setup();
    for (const runId of ids('d', 3)) deliverer.deliver(item(runId));
    // Closed before the gathering window ran out: nothing was sent yet.
    await deliverer.close();
    expect(stub.batchAttempts).toEqual([]);
    await deliverer.drainOnce();
    expect(stub.batchAttempts).toEqual([ids('d', 3)]);
    expect(stub.stored.map((r) => r.runId)).toEqual(ids('d', 3));
    expect(spool.size).toBe(0);
  });
});

describe('AgentDaemon and result batches', () => {
  it("takes the batch size from the service's registration answer", async () => {
    const runner = {
      checkType: 'API' as const,
      run: async () => passingOutcome(),
    };
    const { stub, daemon, recorder } = await startStubDaemon(cleanups, {
      apiKey: 'pl_batch_test_key',
      stub: { resultBatchMax: 25 },
      spoolDir: tempDir('batches'),
      runners: new Map([['API', runner]]),
      shutdownGraceSeconds: 5,
    });
    await daemon.start();
    expect(recorder.lines.find((l) => l.msg === 'registered; taking work')?.resultBatchMax).toBe(25);
    const job = makeJob();
    const delivered = once(daemon, 'result-delivered');
    stub.addJob(job);
    await delivered;
    expect(stub.batchAttempts).toEqual([[job.runId]]);
    expect(stub.resultAttempts).toEqual([]);
  });
});
