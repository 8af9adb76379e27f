/** Client certificates for mutual TLS (docs/api.md "Client certificates"). */

/** A stored certificate as the API shows it: never its key or passphrase. */
export interface ClientCertificate {
  id: string;
  accountId: string;
  /** The host pattern it applies to: a name, or a wildcard such as `*.acme.com`. */
  host: string;
  cert: string;
  ca: string | null;
  createdAt: string;
}

/** A certificate with its secret half still sealed, for a job's snapshot (opened when it is leased). */
export interface SealedClientCertificate extends ClientCertificate {
  sealedKey: string;
  sealedPassphrase: string | null;
}

export interface ClientCertificateInput {
  host: string;
  cert: string;
  ca: string | null;
  key: string;
  passphrase: string | null;
}

export interface ClientCertificateRepo {
  /** The account's certificates, newest first. */
  list(accountId: string): Promise<ClientCertificate[]>;
  get(accountId: string, id: string): Promise<ClientCertificate | undefined>;
  /** The account's certificates newest first, key and passphrase sealed: for a job's snapshot. */
  listSealed(accountId: string): Promise<SealedClientCertificate[]>;
  create(accountId: string, input: ClientCertificateInput): Promise<ClientCertificate>;
  delete(accountId: string, id: string): Promise<boolean>;
}
