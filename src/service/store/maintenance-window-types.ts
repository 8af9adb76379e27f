/**
 * Repository of maintenance windows (/v1/maintenance-windows): one-off or repeating periods in which
 * the alerting step suppresses notifications for the checks they cover (src/service/alerting/maintenance.ts).
 * Times are UTC ISO instants; ids are numeric, as in the reference.
 */

export type RepeatUnit = 'DAY' | 'WEEK' | 'MONTH';

/** What the API stores for a window, already validated (endsAt after startsAt, repeat fields consistent). */
export interface MaintenanceWindowInput {
  name: string;
  tags: string[];
  startsAt: string;
  endsAt: string;
  repeatUnit: RepeatUnit | null;
  repeatInterval: number | null;
  /** Calendar date (YYYY-MM-DD, UTC) on or before which occurrences may start; null: forever. */
  repeatEndsAt: string | null;
  description: string | null;
  pauseAllChecks: boolean;
  silenceAlertsTags: string[];
  silenceAllAlerts: boolean;
}

export interface MaintenanceWindow extends MaintenanceWindowInput {
  id: number;
  accountId: string;
  createdAt: string;
  updatedAt: string | null;
}

export interface MaintenanceWindowRepo {
  list(accountId: string, opts: { limit: number; page: number }): Promise<MaintenanceWindow[]>;
  /** Every window of the account, for the alerting step's activity check. */
  listAll(accountId: string): Promise<MaintenanceWindow[]>;
  get(accountId: string, id: number): Promise<MaintenanceWindow | undefined>;
  create(accountId: string, input: MaintenanceWindowInput): Promise<MaintenanceWindow>;
  /** Replaces the stored fields; undefined when the account has no such window. */
  update(accountId: string, id: number, input: MaintenanceWindowInput): Promise<MaintenanceWindow | undefined>;
  delete(accountId: string, id: number): Promise<boolean>;
}
