/**
 * The result deliverer: several uploads in flight while the service answers, strictly ordered spool
 * draining once one fails, and nothing lost either way. The client is a stand-in whose answers the
 * test decides one by one; the real client and service are covered in test/e2e.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { TransientError } from '../../src/agent/client.ts';
import { LIVE_UPLOADS, ResultDeliverer } from '../../src/agent/deliverer.ts';
import { ResultSpool } from '../../src/agent/spool.ts';
import type { SubmitResultRequest, SubmitResultResponse } from '../../src/shared/protocol.ts';
import { recordingLogger, submitRequest as item, tempDir } from './helpers.ts';

/** A service stand-in: every upload waits until the test answers it. */
function controllableClient() {
  const calls: Array<{ runId: string; resolve: (r: SubmitResultResponse) => void; reject: (e: Error) => void }> = [];
  const arrivals = new (class extends EventTarget {})();
  return {
    calls,
    async waitForCalls(n: number) {
      while (calls.length < n) await new Promise((r) => arrivals.addEventListener('call', r, { once: true }));
    },
    client: {
      submitResult(req: SubmitResultRequest): Promise<SubmitResultResponse> {
        return new Promise((resolve, reject) => {
          calls.push({ runId: req.result.runId, resolve, reject });
          arrivals.dispatchEvent(new Event('call'));
        });
      },
      // Never offered: no resultBatchMax was given (test/agent/deliverer-batches.test.ts covers batches).
      submitResultBatch: () => Promise.reject(new Error('this stand-in takes no batches')),
    },
  };
}

describe('ResultDeliverer', () => {
  it(`keeps up to ${LIVE_UPLOADS} uploads in flight while the service answers`, async () => {
    const dir = await tempDir('deliverer');
    const spool = await ResultSpool.open({ dir, maxBytes: 1 << 20, log: recordingLogger().log });
    const svc = controllableClient();
    const deliverer = new ResultDeliverer({ client: svc.client, spool, log: recordingLogger().log });
    for (let i = 0; i < 20; i++) deliverer.deliver(item(`r${i}`));
    await svc.waitForCalls(LIVE_UPLOADS);
    // The ninth waits for a free place rather than piling on.
    await new Promise((r) => setImmediate(r));
    expect(svc.calls).toHaveLength(LIVE_UPLOADS);
    const delivered: string[] = [];
    deliverer.on('delivered', ({ runId }) => delivered.push(runId));
    for (let answered = 0; answered < 20; answered++) {
      await svc.waitForCalls(answered + 1);
      svc.calls[answered]!.resolve({ status: 'stored', resultId: `id-${answered}` });
    }
    while (delivered.length < 20) await once(deliverer, 'delivered');
    expect(new Set(delivered).size).toBe(20);
    expect(spool.size).toBe(0);
    await deliverer.close();
  });

  it('after a failed upload, spools it and drains the spool strictly in order once the service is back', async () => {
    const dir = await tempDir('deliverer');
    const spool = await ResultSpool.open({ dir, maxBytes: 1 << 20, log: recordingLogger().log });
    const svc = controllableClient();
    const deliverer = new ResultDeliverer({
      client: svc.client,
      spool,
      log: recordingLogger().log,
      backoff: { baseMs: 1, capMs: 1 },
    });
    deliverer.deliver(item('first'));
    await svc.waitForCalls(1);
    svc.calls[0]!.reject(new TransientError('service away'));
    await once(deliverer, 'spooled');
    // Results that arrive while something is spooled queue behind it.
    deliverer.deliver(item('second'));
    deliverer.deliver(item('third'));
    const order: string[] = [];
    deliverer.on('delivered', ({ runId }) => order.push(runId));
    // Each spooled upload is answered in turn; only one is ever in flight in this mode.
    for (let n = 2; order.length < 3; n++) {
      await svc.waitForCalls(n);
      const call = svc.calls[n - 1]!;
      expect(svc.calls.length).toBe(n);
      call.resolve({ status: 'stored', resultId: call.runId });
      await once(deliverer, 'delivered');
    }
    expect(order).toEqual(['first', 'second', 'third']);
    expect(spool.size).toBe(0);
    await deliverer.close();
  });
});
