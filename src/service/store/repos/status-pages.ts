/**
 * Status pages (with their cards) and status page services. A card lists services; which pages
 * show a service decides whose subscribers an incident on that service notifies (see outbox.ts).
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError } from '../../http/errors.ts';
import { isUniqueViolation, nowIso, type SqlDatabase, type SqlExecutor } from '../sql/database.ts';
import type {
  DefaultTheme,
  Page,
  PageRequest,
  SpService,
  SpServiceRepo,
  StatusPage,
  StatusPageCard,
  StatusPageInput,
  StatusPageRepo,
  ThemeColors,
} from '../status-pages-types.ts';
import { decodeSeqCursor, toPage } from './seq-cursor.ts';

interface ServiceRow {
  seq: number;
  id: string;
  account_id: string;
  name: string;
  created_at: string;
  updated_at: string | null;
}

export const toService = (row: ServiceRow): SpService => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const SERVICE_COLUMNS = 's.seq, s.id, s.account_id, s.name, s.created_at, s.updated_at';

/**
 * The account's services with these ids, in the order given; a BadRequestError names the first id
 * that is not one of the account's services (another account's id looks exactly like a missing one).
 */
export async function resolveServices(
  db: SqlExecutor,
  accountId: string,
  ids: readonly string[],
  field: string,
): Promise<SpService[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const rows = await db.all<ServiceRow>(
    `SELECT ${SERVICE_COLUMNS} FROM sp_services s WHERE s.account_id = ? AND s.id IN (${unique.map(() => '?').join(', ')})`,
    [accountId, ...unique],
  );
  const byId = new Map(rows.map((r) => [r.id, toService(r)]));
  return unique.map((id) => {
    const service = byId.get(id);
    if (!service) throw new BadRequestError(`${field}: no status page service with id "${id}" in this account`);
    return service;
  });
}

export class SqlSpServiceRepo implements SpServiceRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(accountId: string, name: string): Promise<SpService> {
    const service: SpService = { id: randomUUID(), accountId, name, createdAt: nowIso(), updatedAt: null };
    await this.#db.run('INSERT INTO sp_services (id, account_id, name, created_at) VALUES (?, ?, ?, ?)', [
      service.id,
      accountId,
      name,
      service.createdAt,
    ]);
    return service;
  }

  async update(accountId: string, id: string, name: string): Promise<SpService | undefined> {
    const { changes } = await this.#db.run(
      'UPDATE sp_services SET name = ?, updated_at = ? WHERE id = ? AND account_id = ?',
      [name, nowIso(), id, accountId],
    );
    return changes > 0 ? this.get(accountId, id) : undefined;
  }

  async get(accountId: string, id: string): Promise<SpService | undefined> {
    const row = await this.#db.get<ServiceRow>(
      `SELECT ${SERVICE_COLUMNS} FROM sp_services s WHERE s.id = ? AND s.account_id = ?`,
      [id, accountId],
    );
    return row && toService(row);
  }

  async list(accountId: string, page: { limit?: number; nextId?: string }): Promise<Page<SpService>> {
    const after = page.nextId ? decodeSeqCursor('svc', page.nextId) : 0;
    const select = `SELECT ${SERVICE_COLUMNS} FROM sp_services s WHERE s.account_id = ? AND s.seq > ? ORDER BY s.seq`;
    if (page.limit === undefined) {
      const rows = await this.#db.all<ServiceRow>(select, [accountId, after]);
      return { entries: rows.map(toService), nextId: null };
    }
    const rows = await this.#db.all<ServiceRow>(`${select} LIMIT ?`, [accountId, after, page.limit + 1]);
    return toPage('svc', rows, page.limit, (r) => r.map(toService));
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    // Card and incident links go with it (ON DELETE CASCADE).
    return (await this.#db.run('DELETE FROM sp_services WHERE id = ? AND account_id = ?', [id, accountId])).changes > 0;
  }
}

interface PageRow {
  seq: number;
  id: string;
  account_id: string;
  name: string;
  url: string;
  custom_domain: string | null;
  theme_colors: string | null;
  logo: string | null;
  logo_dark: string | null;
  redirect_to: string | null;
  favicon: string | null;
  default_theme: string;
  version: number | null;
  is_private: number;
  description: string | null;
  white_label: number;
  created_at: string;
  updated_at: string | null;
}

interface CardRow {
  id: string;
  status_page_id: string;
  name: string;
  created_at: string;
  updated_at: string | null;
}

const PAGE_COLUMNS =
  'p.seq, p.id, p.account_id, p.name, p.url, p.custom_domain, p.theme_colors, p.logo, p.logo_dark, p.redirect_to, p.favicon, p.default_theme, p.version, p.is_private, p.description, p.white_label, p.created_at, p.updated_at';

export class SqlStatusPageRepo implements StatusPageRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(accountId: string, input: StatusPageInput): Promise<StatusPage> {
    const id = randomUUID();
    return this.#db.transaction(async () => {
      await this.#writePage(
        () =>
          this.#db.run(
            `INSERT INTO status_pages (id, account_id, name, url, custom_domain, theme_colors, logo, logo_dark, redirect_to,
               favicon, default_theme, version, description, is_private, white_label, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            [id, accountId, ...this.#fieldValues(input), nowIso()],
          ),
        input,
      );
      await this.#replaceCards(accountId, id, input);
      return (await this.get(accountId, id)) as StatusPage;
    });
  }

  async update(accountId: string, id: string, input: StatusPageInput): Promise<StatusPage | undefined> {
    return this.#db.transaction(async () => {
      const result = await this.#writePage(
        () =>
          this.#db.run(
            `UPDATE status_pages SET name = ?, url = ?, custom_domain = ?, theme_colors = ?, logo = ?, logo_dark = ?,
               redirect_to = ?, favicon = ?, default_theme = ?, version = ?, description = ?, is_private = ?, white_label = ?,
               updated_at = ? WHERE id = ? AND account_id = ?`,
            [...this.#fieldValues(input), nowIso(), id, accountId],
          ),
        input,
      );
      if (result.changes === 0) return undefined;
      await this.#replaceCards(accountId, id, input);
      return this.get(accountId, id);
    });
  }

  async get(accountId: string, id: string): Promise<StatusPage | undefined> {
    const row = await this.#db.get<PageRow>(
      `SELECT ${PAGE_COLUMNS} FROM status_pages p WHERE p.id = ? AND p.account_id = ?`,
      [id, accountId],
    );
    return row && (await this.#withCards([row]))[0];
  }

  async list(accountId: string, page: PageRequest): Promise<Page<StatusPage>> {
    const after = page.nextId ? decodeSeqCursor('sp', page.nextId) : 0;
    const rows = await this.#db.all<PageRow>(
      `SELECT ${PAGE_COLUMNS} FROM status_pages p WHERE p.account_id = ? AND p.seq > ? ORDER BY p.seq LIMIT ?`,
      [accountId, after, page.limit + 1],
    );
    const pageRows = rows.slice(0, page.limit);
    const withCards = await this.#withCards(pageRows);
    return toPage('sp', rows, page.limit, () => withCards);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM status_pages WHERE id = ? AND account_id = ?', [id, accountId])).changes > 0
    );
  }

  #fieldValues(input: StatusPageInput) {
    return [
      input.name,
      input.url.toLowerCase(),
      input.customDomain === null ? null : input.customDomain.toLowerCase(),
      input.themeColors === null ? null : JSON.stringify(input.themeColors),
      input.logo,
      input.logoDark,
      input.redirectTo,
      input.favicon,
      input.defaultTheme,
      input.version,
      input.description,
      input.isPrivate ? 1 : 0,
      input.whiteLabel ? 1 : 0,
    ] as const;
  }

  /** Runs the INSERT/UPDATE; the unique indexes turn a taken url or custom domain into a 409. */
  async #writePage<T>(write: () => Promise<T>, input: StatusPageInput): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // SQLite names the column, PostgreSQL the constraint (status_pages_custom_domain_key): both say custom_domain.
      const message = String((err as Error).message);
      if (message.includes('custom_domain')) {
        throw new ConflictError(`body/customDomain "${input.customDomain}" is already used by another status page`);
      }
      throw new ConflictError(`body/url "${input.url}" is already used by another status page`);
    }
  }

  /**
   * Cards are replaced as a whole by the body's list, in its order. A card whose `id` is one of
   * this page's cards keeps that id and its created_at; any other card is created anew.
   */
  async #replaceCards(accountId: string, pageId: string, input: StatusPageInput): Promise<void> {
    const rows = await this.#db.all<CardRow>(
      'SELECT id, status_page_id, name, created_at, updated_at FROM status_page_cards WHERE status_page_id = ?',
      [pageId],
    );
    const existing = new Map(rows.map((c) => [c.id, c]));
    const kept = new Set<string>();
    const now = nowIso();
    for (const [index, card] of input.cards.entries()) {
      const services = await resolveServices(this.#db, accountId, card.serviceIds, `body/cards/${index}/services`);
      const previous = card.id === undefined ? undefined : existing.get(card.id);
      const cardId = previous && !kept.has(previous.id) ? previous.id : randomUUID();
      if (cardId === previous?.id) {
        await this.#db.run('UPDATE status_page_cards SET name = ?, position = ?, updated_at = ? WHERE id = ?', [
          card.name,
          index,
          now,
          cardId,
        ]);
        await this.#db.run('DELETE FROM status_page_card_services WHERE card_id = ?', [cardId]);
      } else {
        await this.#db.run(
          'INSERT INTO status_page_cards (id, status_page_id, position, name, created_at) VALUES (?, ?, ?, ?, ?)',
          [cardId, pageId, index, card.name, now],
        );
      }
      kept.add(cardId);
      for (const [position, service] of services.entries()) {
        await this.#db.run('INSERT INTO status_page_card_services (card_id, service_id, position) VALUES (?, ?, ?)', [
          cardId,
          service.id,
          position,
        ]);
      }
    }
    for (const id of existing.keys()) {
      if (!kept.has(id)) await this.#db.run('DELETE FROM status_page_cards WHERE id = ?', [id]);
    }
  }

  /** The services of each card, in the card's order. */
  async #servicesByCard(cardIds: string[]): Promise<Map<string, SpService[]>> {
    const servicesByCard = new Map<string, SpService[]>();
    if (cardIds.length === 0) return servicesByCard;
    const links = await this.#db.all<ServiceRow & { card_id: string }>(
      `SELECT cs.card_id, ${SERVICE_COLUMNS} FROM status_page_card_services cs JOIN sp_services s ON s.id = cs.service_id
         WHERE cs.card_id IN (${cardIds.map(() => '?').join(', ')}) ORDER BY cs.card_id, cs.position`,
      cardIds,
    );
    for (const link of links) {
      const list = servicesByCard.get(link.card_id) ?? [];
      list.push(toService(link));
      servicesByCard.set(link.card_id, list);
    }
    return servicesByCard;
  }

  async #withCards(rows: PageRow[]): Promise<StatusPage[]> {
    if (rows.length === 0) return [];
    const cardRows = await this.#db.all<CardRow>(
      `SELECT id, status_page_id, name, created_at, updated_at FROM status_page_cards
         WHERE status_page_id IN (${rows.map(() => '?').join(', ')}) ORDER BY status_page_id, position`,
      rows.map((r) => r.id),
    );
    const servicesByCard = await this.#servicesByCard(cardRows.map((c) => c.id));
    const cardsByPage = new Map<string, StatusPageCard[]>();
    for (const c of cardRows) {
      const list = cardsByPage.get(c.status_page_id) ?? [];
      list.push({
        id: c.id,
        name: c.name,
        services: servicesByCard.get(c.id) ?? [],
        createdAt: c.created_at,
        updatedAt: c.updated_at,
      });
      cardsByPage.set(c.status_page_id, list);
    }
    return rows.map((row) => toStatusPage(row, cardsByPage.get(row.id) ?? []));
  }
}

function toStatusPage(row: PageRow, cards: StatusPageCard[]): StatusPage {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    url: row.url,
    customDomain: row.custom_domain,
    themeColors: row.theme_colors === null ? null : (JSON.parse(row.theme_colors) as ThemeColors),
    logo: row.logo,
    logoDark: row.logo_dark,
    redirectTo: row.redirect_to,
    favicon: row.favicon,
    defaultTheme: row.default_theme as DefaultTheme,
    version: row.version,
    description: row.description,
    isPrivate: row.is_private === 1,
    whiteLabel: row.white_label === 1,
    cards,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
