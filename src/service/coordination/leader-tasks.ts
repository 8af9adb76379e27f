/**
 * Work that must happen once across replicas (the scheduler, sweeps, the outbox): started when this
 * replica becomes leader and stopped, each stop awaited (drained), when it stops leading. Both in the
 * order given: list producers of work before its consumers, so producers stop first.
 */
import type { CoordinationLog } from './log.ts';
import type { Leadership } from './types.ts';

export interface LeaderTask {
  /** For the log. */
  name: string;
  start(): Promise<void> | void;
  /** Resolves when the task's work in hand is finished: nothing of it runs afterwards. */
  stop(): Promise<void> | void;
}

export function runWhileLeading(leadership: Leadership, tasks: readonly LeaderTask[], log: CoordinationLog): void {
  leadership.onAcquire(async () => {
    for (const task of tasks) await guarded(task, 'start', log);
  });
  leadership.onLose(async () => {
    for (const task of tasks) await guarded(task, 'stop', log);
  });
}

async function guarded(task: LeaderTask, step: 'start' | 'stop', log: CoordinationLog): Promise<void> {
  try {
    await task[step]();
  } catch (err) {
    log.error({ err, task: task.name }, `leader task could not ${step}`);
  }
}
