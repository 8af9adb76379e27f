/** Error reports agents send through the Sentry protocol, and the hashes of the tokens they use. */
import { randomUUID } from 'node:crypto';
import type { ErrorReportRepo } from '../dispatch-types.ts';
import type { SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import type { ErrorReport } from '../store.ts';

interface ReportRow {
  id: string;
  location_id: string;
  received_at: string;
  event_json: string;
}

const toReport = (row: ReportRow): ErrorReport => ({
  id: row.id,
  locationId: row.location_id,
  receivedAt: row.received_at,
  event: JSON.parse(row.event_json) as Record<string, unknown>,
});

/** Newest first: the reverse of the order they were written in (within an envelope, event order). */
const newestFirst = (db: SqlDatabase) => `ORDER BY ${dialectSql(db.dialect).insertionOrder('error_reports')} DESC`;

export class SqlErrorReportRepo implements ErrorReportRepo {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async ensureToken(locationId: string, tokenHash: string, now: string): Promise<void> {
    await this.#db.run(
      'INSERT INTO error_report_tokens (token_hash, location_id, created_at) VALUES (?, ?, ?) ON CONFLICT (token_hash) DO NOTHING',
      [tokenHash, locationId, now],
    );
  }

  async findLocationByToken(tokenHash: string): Promise<string | undefined> {
    return (
      await this.#db.get<{ location_id: string }>('SELECT location_id FROM error_report_tokens WHERE token_hash = ?', [
        tokenHash,
      ])
    )?.location_id;
  }

  async insert(
    locationId: string,
    events: Record<string, unknown>[],
    receivedAt: string,
    keep: number,
  ): Promise<ErrorReport[]> {
    if (events.length === 0) return [];
    return this.#db.transaction(async () => {
      const rows: ReportRow[] = [];
      for (const event of events) {
        const row = await this.#db.get<ReportRow>(
          'INSERT INTO error_reports (id, location_id, received_at, event_json) VALUES (?, ?, ?, ?) RETURNING *',
          [randomUUID(), locationId, receivedAt, JSON.stringify(event)],
        );
        rows.push(row as ReportRow);
      }
      // A crash-looping agent must not fill the disk: only the newest reports of a location are kept.
      await this.#db.run(
        `DELETE FROM error_reports WHERE location_id = $locationId AND id NOT IN (
           SELECT id FROM error_reports WHERE location_id = $locationId ${newestFirst(this.#db)} LIMIT $keep)`,
        { locationId, keep },
      );
      return rows.map(toReport);
    });
  }

  async list(locationId: string, limit: number): Promise<ErrorReport[]> {
    return (
      await this.#db.all<ReportRow>(
        `SELECT * FROM error_reports WHERE location_id = ? ${newestFirst(this.#db)} LIMIT ?`,
        [locationId, limit],
      )
    ).map(toReport);
  }
}
