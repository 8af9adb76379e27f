/**
 * Reminders of a standing alert: while a check stays FAILING (or DEGRADED), ALERT_FAILURE_REMAIN
 * (ALERT_DEGRADED_REMAIN) at alert time + n × reminders.interval until reminders.amount are sent.
 *
 * The sweep finds checks whose next reminder is due (check_statuses.next_reminder_at, kept by every
 * status update) and, in one transaction per check, re-reads the status, re-computes with the
 * check's current settings and records the reminder with the raised count and the next due time.
 * Two replicas sweeping one database therefore never send one reminder twice. It runs on a timer to
 * the earliest due time, never waiting longer than the poll interval: a status update of this or
 * another replica may bring a reminder forward.
 */
import { groupOf } from '../checks/group-of.ts';
import type {
  CheckAlertRecord,
  CheckStatusRecord,
  NewCheckAlert,
  ReminderUpdate,
  WithAlert,
} from '../store/check-status-types.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import { type AlertSettings, effectiveAlertSettings } from './alert-settings.ts';
import { reminderStep } from './state-machine.ts';
import type { Log } from '../../shared/log.ts';

const BATCH = 100;
export const DEFAULT_REMINDER_POLL_MS = 15_000;

export interface ReminderSweeperOptions {
  store: Pick<Store, 'checkStatuses' | 'checks' | 'checkGroups'>;
  log: Pick<Log, 'error'>;
  /** The clock reminders are due by (tests move it). */
  now?: () => number;
  /** The longest the timer waits between two sweeps. */
  pollIntervalMs?: number;
  /** Runs inside the transaction that records a reminder (database work only: see WithAlert). */
  onAlert?: WithAlert;
  /** Runs after a sweep's transactions committed, with the reminders they recorded (none: not called). */
  onAlertsRaised?: (alerts: CheckAlertRecord[]) => void;
}

export class ReminderSweeper {
  readonly #opts: ReminderSweeperOptions;
  readonly #now: () => number;
  readonly #pollMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<CheckAlertRecord[]> | undefined;
  #stopped = true;

  constructor(opts: ReminderSweeperOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#pollMs = opts.pollIntervalMs ?? DEFAULT_REMINDER_POLL_MS;
  }

  /** Sweeps now, then whenever the next reminder is due. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#arm(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Records every reminder due now; never two sweeps of this sweeper at once. */
  sweep(): Promise<CheckAlertRecord[]> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #sweep(): Promise<CheckAlertRecord[]> {
    const at = new Date(this.#now()).toISOString();
    const sent: CheckAlertRecord[] = [];
    for (;;) {
      const due = await this.#opts.store.checkStatuses.listRemindersDue(at, BATCH);
      for (const { accountId, checkId } of due) {
        const reminder = await this.#remind(accountId, checkId, at);
        if (reminder) sent.push(reminder);
      }
      if (due.length < BATCH) break;
    }
    if (sent.length > 0) this.#opts.onAlertsRaised?.(sent);
    return sent;
  }

  async #remind(accountId: string, checkId: string, at: string): Promise<CheckAlertRecord | null> {
    const { store, onAlert } = this.#opts;
    const check = await store.checks.get(accountId, checkId);
    // Deleted meanwhile: its status goes with it.
    if (!check) return null;
    const settings = effectiveAlertSettings(check, await groupOf(store, check));
    return store.checkStatuses.applyReminder(
      accountId,
      checkId,
      at,
      (status, reminded) => reminderUpdate(status, reminded, check, settings, Date.parse(at)),
      onAlert,
    );
  }

  #arm(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), delayMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    try {
      await this.sweep();
      const next = await this.#opts.store.checkStatuses.nextReminderDue();
      const untilDue = next === null ? this.#pollMs : Date.parse(next) - this.#now();
      this.#arm(Math.min(Math.max(untilDue, 0), this.#pollMs));
    } catch (err) {
      this.#opts.log.error({ err }, 'reminder sweep failed');
      this.#arm(this.#pollMs);
    }
  }
}

/** The reminder due for `status` now, if any, and the next due time; pure, run inside the store's transaction. */
export function reminderUpdate(
  status: CheckStatusRecord,
  reminded: CheckAlertRecord | undefined,
  check: Pick<StoredCheck, 'name' | 'checkType'>,
  settings: AlertSettings,
  nowMs: number,
): ReminderUpdate {
  const step = reminderStep(status.alert, settings, nowMs);
  const nextReminderAt = step.nextReminderAtMs === null ? null : new Date(step.nextReminderAtMs).toISOString();
  const remind = step.remind && reminded !== undefined;
  return { alert: step.next, reminder: remind ? reminderOf(reminded, status, check) : null, nextReminderAt };
}

/** A reminder carries the facts of the alert it reminds of. */
function reminderOf(
  reminded: CheckAlertRecord,
  status: CheckStatusRecord,
  check: Pick<StoredCheck, 'name' | 'checkType'>,
): NewCheckAlert {
  return {
    name: check.name,
    checkType: check.checkType,
    alertType: status.alert.state === 'DEGRADED' ? 'ALERT_DEGRADED_REMAIN' : 'ALERT_FAILURE_REMAIN',
    runLocation: reminded.runLocation,
    responseTime: reminded.responseTime,
    error: reminded.error,
    statusCode: reminded.statusCode,
    resultId: reminded.resultId,
    startedAt: reminded.startedAt,
    sslDaysRemaining: null,
  };
}
