/**
 * The daemon's backpressure with result batches: results gathering for a batch are on their way and
 * do not stop leasing; results that cannot leave because every upload is held do.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckOutcome, CheckRunner } from '../../src/agent/checks/runner.ts';
import { passingOutcome } from '../support/passing-outcome.ts';
import { makeJob } from './protocol-stub.ts';
import { type Cleanups, startStubDaemon } from './stub-daemon.ts';

/** Passes every check at once, so results arrive faster than slots. */
const instantRunner: CheckRunner = {
  checkType: 'API',
  async run(): Promise<CheckOutcome> {
    return passingOutcome();
  },
};

const cleanups: Cleanups = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** A daemon with 2 + 1 slots (so it waits once 3 results are a backlog) against a stub offering batches. */
async function setup(resultBatchMax: number, jobs: number) {
  const { stub, daemon } = await startStubDaemon(cleanups, {
    apiKey: 'pl_backlog_test_key',
    stub: { resultBatchMax },
    runners: new Map([['API', instantRunner]]),
    uptimeConcurrency: 2,
  });
  const waits: number[] = [];
  daemon.on('waiting-for-results', ({ pending }) => waits.push(pending));
  for (let i = 0; i < jobs; i++) stub.addJob(makeJob({ runId: `b${i}` }));
  return { stub, daemon, waits };
}

describe('AgentDaemon backpressure with result batches', () => {
  it('keeps leasing while a batch still gathering holds more results than the agent has slots', async () => {
    const { stub, daemon, waits } = await setup(100, 40);
    await daemon.start();
    await stub.until(() => stub.stored.length === 40);
    expect(waits).toEqual([]);
    // They went in batches, not one call each.
    expect(stub.batchAttempts.length).toBeLessThan(40);
  });

  it('stops leasing while every upload is held, and goes on once the service stores them', async () => {
    const { stub, daemon, waits } = await setup(2, 60);
    let storeResults = () => {};
    stub.holdResults = new Promise<void>((resolve) => {
      storeResults = resolve;
    });
    const waiting = once(daemon, 'waiting-for-results');
    await daemon.start();
    const [{ pending }] = await waiting;
    // Held: up to LIVE_UPLOADS batches of 2 in upload, three or more waiting behind them.
    expect(pending).toBeGreaterThanOrEqual(3);
    expect(waits).toHaveLength(1);
    expect(stub.queue.length).toBeGreaterThan(0);
    stub.holdResults = undefined;
    storeResults();
    await stub.until(() => stub.stored.length === 60);
    expect(stub.queue).toEqual([]);
  });
});
