/** Snippets on SQLite: reusable setup/teardown code an account's checks and groups refer to by id. */
import type { DatabaseSync } from 'node:sqlite';
import type { Snippet, SnippetInput, SnippetRepo } from '../variables-types.ts';
import { nowIso } from './db.ts';

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

export class SqliteSnippetRepo implements SnippetRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<Snippet[]> {
    const rows = this.#db
      .prepare('SELECT * FROM snippets WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?')
      .all(accountId, opts.limit, (opts.page - 1) * opts.limit);
    return (rows as unknown as SnippetRow[]).map(toSnippet);
  }

  async get(accountId: string, id: number): Promise<Snippet | undefined> {
    const row = this.#db.prepare('SELECT * FROM snippets WHERE id = ? AND account_id = ?').get(id, accountId);
    return row ? toSnippet(row as unknown as SnippetRow) : undefined;
  }

  async getMany(accountId: string, ids: readonly number[]): Promise<Snippet[]> {
    if (ids.length === 0) return [];
    const rows = this.#db
      .prepare('SELECT * FROM snippets WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))')
      .all(accountId, JSON.stringify([...new Set(ids)]));
    return (rows as unknown as SnippetRow[]).map(toSnippet);
  }

  async create(accountId: string, input: SnippetInput): Promise<Snippet> {
    const row = this.#db
      .prepare('INSERT INTO snippets (account_id, name, script, created_at) VALUES (?, ?, ?, ?) RETURNING *')
      .get(accountId, input.name, input.script, nowIso());
    return toSnippet(row as unknown as SnippetRow);
  }

  async update(accountId: string, id: number, input: SnippetInput): Promise<Snippet | undefined> {
    const row = this.#db
      .prepare('UPDATE snippets SET name = ?, script = ?, updated_at = ? WHERE id = ? AND account_id = ? RETURNING *')
      .get(input.name, input.script, nowIso(), id, accountId);
    return row ? toSnippet(row as unknown as SnippetRow) : undefined;
  }

  async delete(accountId: string, id: number): Promise<boolean> {
    return this.#db.prepare('DELETE FROM snippets WHERE id = ? AND account_id = ?').run(id, accountId).changes > 0;
  }
}
