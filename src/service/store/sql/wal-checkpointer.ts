/**
 * Checkpoints the SQLite write-ahead log from a worker thread.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that fills the log, on the committing thread:
 * it copies the log's pages into the database and waits for two fsyncs. node:sqlite is synchronous,
 * so that wait stalled the service's one thread (every request, every claim) for milliseconds, about
 * once a second at a thousand results a second. A PASSIVE checkpoint from another connection does
 * the same work without blocking writers, so the worker runs one every `everyMs`, and the service's
 * own connection keeps only a backstop (`BACKSTOP_PAGES`) in case the worker falls far behind.
 */
import { Worker } from 'node:worker_threads';

/** The log size (pages of 4 KiB) at which the service's own connection checkpoints after all. */
export const BACKSTOP_PAGES = 20_000;

// CommonJS, evaluated as the worker's whole program: nothing to resolve or compile at start.
const WORKER_PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA busy_timeout = 1000');
const timer = setInterval(() => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message ? error.message : error) });
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointerOptions {
  /** The database file (its connection must be in WAL mode). */
  file: string;
  everyMs?: number;
  /** A checkpoint failed (the next one tries again; the backstop still holds). */
  onError?: (message: string) => void;
}

export class WalCheckpointer {
  readonly #worker: Worker;
  readonly #exited: Promise<void>;

  constructor(opts: WalCheckpointerOptions) {
    this.#worker = new Worker(WORKER_PROGRAM, {
      eval: true,
      workerData: { file: opts.file, everyMs: opts.everyMs ?? 500 },
    });
    this.#worker.on('message', (m: { error?: string }) => m.error && opts.onError?.(m.error));
    this.#worker.on('error', (err) => opts.onError?.(err.message));
    this.#exited = new Promise((resolve) => this.#worker.once('exit', () => resolve()));
    // The service's lifetime is its server's; this thread must not keep a finished process alive.
    this.#worker.unref();
  }

  /** Stops the worker after its checkpoint in progress, and closes its connection. */
  async stop(): Promise<void> {
    // Referenced again while it stops: a process that awaits this as its last step must wait for it.
    this.#worker.ref();
    this.#worker.postMessage('stop');
    await this.#exited;
  }
}
