/**
 * Client certificates: an account's PEM certificate and key pairs for mutual TLS. The key and its
 * passphrase are sealed in the row (src/service/secrets/box.ts) and opened only to build a job.
 */
import type { SecretBox } from '../../secrets/box.ts';
import type {
  ClientCertificate,
  ClientCertificateInput,
  ClientCertificateRepo,
  SealedClientCertificate,
} from '../client-certificate-types.ts';
import { nowIso, type SqlDatabase } from '../sql/database.ts';
import { timeOrderedId } from '../time-ordered-id.ts';

interface ClientCertificateRow {
  id: string;
  account_id: string;
  host: string;
  cert: string;
  ca: string | null;
  sealed_key: string;
  sealed_passphrase: string | null;
  created_at: string;
}

const toCertificate = (row: ClientCertificateRow): ClientCertificate => ({
  id: row.id,
  accountId: row.account_id,
  host: row.host,
  cert: row.cert,
  ca: row.ca,
  createdAt: row.created_at,
});

export class SqlClientCertificateRepo implements ClientCertificateRepo {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;
  constructor(db: SqlDatabase, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async list(accountId: string): Promise<ClientCertificate[]> {
    return (await this.#rows(accountId)).map(toCertificate);
  }

  async get(accountId: string, id: string): Promise<ClientCertificate | undefined> {
    const row = await this.#row(accountId, id);
    return row ? toCertificate(row) : undefined;
  }

  async listSealed(accountId: string): Promise<SealedClientCertificate[]> {
    // The sealed values are copied into the run's snapshot as they are, never opened here.
    return (await this.#rows(accountId)).map((row) => ({
      ...toCertificate(row),
      sealedKey: row.sealed_key,
      sealedPassphrase: row.sealed_passphrase,
    }));
  }

  async create(accountId: string, input: ClientCertificateInput): Promise<ClientCertificate> {
    const row = await this.#db.get<ClientCertificateRow>(
      `INSERT INTO client_certificates (id, account_id, host, cert, ca, sealed_key, sealed_passphrase, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      [
        // Time-ordered, so `id DESC` breaks a tie of created_at by insertion order.
        timeOrderedId(),
        accountId,
        input.host,
        input.cert,
        input.ca,
        this.#box.seal(input.key),
        input.passphrase === null ? null : this.#box.seal(input.passphrase),
        nowIso(),
      ],
    );
    if (!row) throw new Error('a client certificate insert returned no row');
    return toCertificate(row);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM client_certificates WHERE id = ? AND account_id = ?', [id, accountId])).changes >
      0
    );
  }

  #rows(accountId: string): Promise<ClientCertificateRow[]> {
    // Newest first: when several match a host, the most recently added wins (the reference's rule).
    return this.#db.all<ClientCertificateRow>(
      'SELECT * FROM client_certificates WHERE account_id = ? ORDER BY created_at DESC, id DESC',
      [accountId],
    );
  }

  #row(accountId: string, id: string): Promise<ClientCertificateRow | undefined> {
    return this.#db.get<ClientCertificateRow>('SELECT * FROM client_certificates WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
  }
}
