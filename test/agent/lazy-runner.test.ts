/**
 * lazyRunner (src/agent/checks/index.ts): a check type's module loads on its first run, once, and a
 * failed load fails that run only.
 */
import { describe, expect, it } from 'vitest';
import { lazyRunner, RUNNERS } from '../../src/agent/checks/index.ts';
import type { CheckOutcome, CheckRunner } from '../../src/agent/checks/runner.ts';
import type { CheckDefinition } from '../../src/shared/checks/types.ts';
import { context } from './api-fixtures.ts';

const outcome = { hasFailures: false } as CheckOutcome;
const check = { checkType: 'TCP' } as CheckDefinition;

describe('lazyRunner', () => {
  it('loads the module on the first run, once for runs that start together, and runs each', async () => {
    let loads = 0;
    const runs: string[] = [];
    const runner = lazyRunner('TCP', async () => {
      loads += 1;
      const loaded: CheckRunner = {
        checkType: 'TCP',
        async run(c) {
          runs.push(c.checkType);
          return outcome;
        },
      };
      return loaded;
    });
    expect(loads).toBe(0);
    expect(runner.checkType).toBe('TCP');
    await Promise.all([runner.run(check, context()), runner.run(check, context())]);
    await runner.run(check, context());
    expect(loads).toBe(1);
    expect(runs).toEqual(['TCP', 'TCP', 'TCP']);
  });

  it('fails the run whose load failed and loads again on the next', async () => {
    let loads = 0;
    const runner = lazyRunner('DNS', async () => {
      loads += 1;
      if (loads === 1) throw new Error('cannot load');
      return { checkType: 'DNS', run: async () => outcome };
    });
    await expect(runner.run(check, context())).rejects.toThrow('cannot load');
    await expect(runner.run(check, context())).resolves.toBe(outcome);
    expect(loads).toBe(2);
  });

  it('RUNNERS has every check type, each named for its key', () => {
    expect([...RUNNERS.keys()].sort()).toEqual([
      'API',
      'BROWSER',
      'DNS',
      'ICMP',
      'MULTI_STEP',
      'PLAYWRIGHT',
      'SSL',
      'TCP',
      'URL',
    ]);
    for (const [type, runner] of RUNNERS) expect(runner.checkType).toBe(type);
  });
});
