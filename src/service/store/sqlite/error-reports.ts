/** Error reports agents send through the Sentry protocol, and the hashes of the tokens they use. */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ErrorReportRepo } from '../dispatch-types.ts';
import type { ErrorReport } from '../store.ts';
import { inTransaction } from './db.ts';

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

export class SqliteErrorReportRepo implements ErrorReportRepo {
  readonly #db: DatabaseSync;
  readonly #ensureToken: StatementSync;
  readonly #findToken: StatementSync;
  readonly #insert: StatementSync;
  readonly #trim: StatementSync;
  readonly #list: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#ensureToken = db.prepare(
      'INSERT INTO error_report_tokens (token_hash, location_id, created_at) VALUES (?, ?, ?) ON CONFLICT (token_hash) DO NOTHING',
    );
    this.#findToken = db.prepare('SELECT location_id FROM error_report_tokens WHERE token_hash = ?');
    this.#insert = db.prepare(
      'INSERT INTO error_reports (id, location_id, received_at, event_json) VALUES (?, ?, ?, ?) RETURNING *',
    );
    // A crash-looping agent must not fill the disk: only the newest reports of a location are kept.
    this.#trim = db.prepare(`
      DELETE FROM error_reports WHERE location_id = $locationId AND rowid <= (
        SELECT rowid FROM error_reports WHERE location_id = $locationId ORDER BY rowid DESC LIMIT 1 OFFSET $keep)`);
    this.#list = db.prepare('SELECT * FROM error_reports WHERE location_id = ? ORDER BY rowid DESC LIMIT ?');
  }

  async ensureToken(locationId: string, tokenHash: string, now: string): Promise<void> {
    this.#ensureToken.run(tokenHash, locationId, now);
  }

  async findLocationByToken(tokenHash: string): Promise<string | undefined> {
    return (this.#findToken.get(tokenHash) as { location_id: string } | undefined)?.location_id;
  }

  async insert(
    locationId: string,
    events: Record<string, unknown>[],
    receivedAt: string,
    keep: number,
  ): Promise<ErrorReport[]> {
    if (events.length === 0) return [];
    return inTransaction(this.#db, () => {
      const rows = events.map(
        (event) => this.#insert.get(randomUUID(), locationId, receivedAt, JSON.stringify(event)) as unknown as ReportRow,
      );
      this.#trim.run({ locationId, keep });
      return rows.map(toReport);
    });
  }

  async list(locationId: string, limit: number): Promise<ErrorReport[]> {
    return (this.#list.all(locationId, limit) as unknown as ReportRow[]).map(toReport);
  }
}
