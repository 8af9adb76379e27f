/** Snippets: reusable setup/teardown code an account's checks and groups refer to by id. */
import type { Snippet, SnippetInput, SnippetRepo } from '../variables-types.ts';
import { nowIso, type SqlDatabase } from '../sql/database.ts';
import { accountRow, accountRowsPage, deleteAccountRow } from './account-rows.ts';

interface SnippetRow {
  id: number;
  account_id: string;
  name: string;
  script: string;
  created_at: string;
  updated_at: string | null;
}

const toSnippet = (row: SnippetRow): Snippet => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  script: row.script,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class SqlSnippetRepo implements SnippetRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<Snippet[]> {
    const rows = await accountRowsPage<SnippetRow>(this.#db, 'snippets', accountId, opts);
    return rows.map(toSnippet);
  }

  async get(accountId: string, id: number): Promise<Snippet | undefined> {
    const row = await accountRow<SnippetRow>(this.#db, 'snippets', accountId, id);
    return row ? toSnippet(row) : undefined;
  }

  async getMany(accountId: string, ids: readonly number[]): Promise<Snippet[]> {
    if (ids.length === 0) return [];
    const unique = [...new Set(ids)];
    const rows = await this.#db.all<SnippetRow>(
      `SELECT * FROM snippets WHERE account_id = ? AND id IN (${unique.map(() => '?').join(',')})`,
      [accountId, ...unique],
    );
    return rows.map(toSnippet);
  }

  async create(accountId: string, input: SnippetInput): Promise<Snippet> {
    const row = await this.#db.get<SnippetRow>(
      'INSERT INTO snippets (account_id, name, script, created_at) VALUES (?, ?, ?, ?) RETURNING *',
      [accountId, input.name, input.script, nowIso()],
    );
    if (!row) throw new Error('a snippet insert returned no row');
    return toSnippet(row);
  }

  async update(accountId: string, id: number, input: SnippetInput): Promise<Snippet | undefined> {
    const row = await this.#db.get<SnippetRow>(
      'UPDATE snippets SET name = ?, script = ?, updated_at = ? WHERE id = ? AND account_id = ? RETURNING *',
      [input.name, input.script, nowIso(), id, accountId],
    );
    return row ? toSnippet(row) : undefined;
  }

  delete(accountId: string, id: number): Promise<boolean> {
    return deleteAccountRow(this.#db, 'snippets', accountId, id);
  }
}
