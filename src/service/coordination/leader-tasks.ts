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

/**
 * Every task is started even when one before it failed, and every one stopped; a task that could not
 * start makes the acquisition fail (the in-process service does not start; a PostgreSQL replica gives
 * the leadership up, so another one can try).
 */
export function runWhileLeading(leadership: Leadership, tasks: readonly LeaderTask[], log: CoordinationLog): void {
  leadership.onAcquire(async () => {
    const failed: string[] = [];
    for (const task of tasks) if (!(await guarded(task, 'start', log))) failed.push(task.name);
    if (failed.length > 0) throw new Error(`leader work could not start: ${failed.join(', ')}`);
  });
  leadership.onLose(async () => {
    for (const task of tasks) await guarded(task, 'stop', log);
  });
}

/** Whether the step succeeded; a failure is logged with the task's name. */
async function guarded(task: LeaderTask, step: 'start' | 'stop', log: CoordinationLog): Promise<boolean> {
  try {
    await task[step]();
    return true;
  } catch (err) {
    log.error({ err, task: task.name }, `leader task could not ${step}`);
    return false;
  }
}
