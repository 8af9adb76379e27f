/**
 * What the check and group trigger runners share (check-trigger.ts, group-trigger.ts): they enqueue
 * through the dispatcher and watch the runs they started until each ends, so that retries.ts can ask
 * whether a run was triggered (triggered runs are never retried).
 */
import type { Store } from '../store/store.ts';
import type { DispatchLog } from './dispatcher.ts';
import { OpenRuns } from './open-runs.ts';
import type { EnqueueRun, RunWatcher } from './retries.ts';

export interface TriggerRunnerOptions {
  store: Store;
  log: DispatchLog;
  enqueue: EnqueueRun;
  /** How often open runs are checked for having ended without a result. */
  pollMs?: number;
}

/** `T`: what the runner keeps for each open run it started. */
export abstract class TriggerRunner<T> implements RunWatcher {
  protected readonly store: Store;
  protected readonly log: DispatchLog;
  protected readonly enqueue: EnqueueRun;
  protected readonly open: OpenRuns<T>;

  constructor(opts: TriggerRunnerOptions) {
    this.store = opts.store;
    this.log = opts.log;
    this.enqueue = opts.enqueue;
    this.open = new OpenRuns({
      store: opts.store,
      log: opts.log,
      pollMs: opts.pollMs ?? 1000,
      onEnded: (runId) => this.runFinished(runId),
    });
  }

  isTriggered(runId: string): boolean {
    return this.open.has(runId);
  }

  abstract runFinished(runId: string): void;

  stop(): void {
    this.open.stop();
  }
}

/** The retry coordinator takes one watcher: this one answers for several (group and check triggers). */
export function anyWatcher(...watchers: RunWatcher[]): RunWatcher {
  return {
    isTriggered: (runId) => watchers.some((w) => w.isTriggered(runId)),
    runFinished: (runId) => {
      for (const w of watchers) w.runFinished(runId);
    },
  };
}
