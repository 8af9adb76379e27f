/**
 * What the two delivery queues (notification_outbox, ./outbox.ts; alert_notifications,
 * ./alert-notifications.ts) answer alike about their pending rows, each due at its next_attempt_at.
 */
import type { SqlDatabase } from '../sql/database.ts';

export type DeliveryTable = 'notification_outbox' | 'alert_notifications';

/** When the earliest pending delivery is due (ISO), or null when none is pending. */
export async function nextPendingDueAt(db: SqlDatabase, table: DeliveryTable): Promise<string | null> {
  const row = await db.get<{ due: string | null }>(
    `SELECT MIN(next_attempt_at) AS due FROM ${table} WHERE state = 'pending'`,
  );
  return row?.due ?? null;
}

export async function countPending(db: SqlDatabase, table: DeliveryTable): Promise<number> {
  const row = await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE state = 'pending'`);
  return row?.n ?? 0;
}
