/**
 * Repositories of account environment variables and snippets (/v1/variables, /v1/snippets).
 * Variables are keyed by (account, key), as the reference addresses them by key; snippets have
 * numeric ids, as in the reference. Reads are account-scoped like every Store read.
 */

export interface AccountVariable {
  key: string;
  /** Plain text in memory; the repository stores it sealed. */
  value: string;
  locked: boolean;
  secret: boolean;
  createdAt: string;
  updatedAt: string | null;
}

export type AccountVariableInput = Pick<AccountVariable, 'key' | 'value' | 'locked' | 'secret'>;

export interface VariableRepo {
  /** Oldest first (creation order), as pages of `limit`. */
  list(accountId: string, opts?: { limit: number; page: number }): Promise<AccountVariable[]>;
  get(accountId: string, key: string): Promise<AccountVariable | undefined>;
  /** undefined when the key exists already. */
  create(accountId: string, input: AccountVariableInput): Promise<AccountVariable | undefined>;
  update(
    accountId: string,
    key: string,
    input: Omit<AccountVariableInput, 'key'>,
  ): Promise<AccountVariable | undefined>;
  delete(accountId: string, key: string): Promise<boolean>;
}

export interface Snippet {
  id: number;
  accountId: string;
  name: string;
  script: string;
  createdAt: string;
  updatedAt: string | null;
}

export type SnippetInput = Pick<Snippet, 'name' | 'script'>;

export interface SnippetRepo {
  list(accountId: string, opts: { limit: number; page: number }): Promise<Snippet[]>;
  get(accountId: string, id: number): Promise<Snippet | undefined>;
  /** The snippets of these ids that belong to the account (others are simply absent). */
  getMany(accountId: string, ids: readonly number[]): Promise<Snippet[]>;
  create(accountId: string, input: SnippetInput): Promise<Snippet>;
  update(accountId: string, id: number, input: SnippetInput): Promise<Snippet | undefined>;
  delete(accountId: string, id: number): Promise<boolean>;
}
