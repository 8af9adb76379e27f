/**
 * Real receivers for subscriber notifications, on loopback: an SMTP server (the smtp-server
 * package) that keeps every message, and an HTTP webhook receiver whose answers a test scripts.
 * Both let a test await the next arrival instead of sleeping.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/**
 * Resolves with the first item a predicate accepts, from those already there or still to come.
 * `timeoutMs` turns a wait that would hang into an error naming what was awaited.
 */
export class Arrivals<T> {
  readonly items: T[] = [];
  #waiters: { check: () => boolean }[] = [];

  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => !w.check());
  }

  next(accept: (item: T) => boolean = () => true, timeoutMs?: number, what = 'an arrival'): Promise<T> {
    return this.waitFor(1, accept, timeoutMs, what).then((items) => items[0] as T);
  }

  /** Resolves with the first `count` accepted items once that many have arrived. */
  waitFor(count: number, accept: (item: T) => boolean = () => true, timeoutMs?: number, what = `${count} arrivals`): Promise<T[]> {
    const matched = () => this.items.filter(accept);
    if (matched().length >= count) return Promise.resolve(matched().slice(0, count));
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.#waiters = this.#waiters.filter((w) => w !== waiter);
              reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${matched().length} of ${count} so far, ${this.items.length} received)`));
            }, timeoutMs);
      const waiter = {
        check: () => {
          const found = matched();
          if (found.length < count) return false;
          clearTimeout(timer);
          resolve(found.slice(0, count));
          return true;
        },
      };
      this.#waiters.push(waiter);
    });
  }
}

export interface SmtpSink {
  url: string;
  mails: Arrivals<ReceivedMail>;
  close(): Promise<void>;
}

/**
 * A plain SMTP server on loopback (no STARTTLS: its built-in certificate is self-signed; no AUTH).
 * `accept` sees each message; an error it returns refuses the message with the error's responseCode.
 */
export async function listenSmtp(accept: (mail: ReceivedMail) => Error | undefined): Promise<{ url: string; close(): Promise<void> }> {
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        callback(
          accept({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails = new Arrivals<ReceivedMail>();
  const server = await listenSmtp((mail) => {
    mails.push(mail);
    return undefined;
  });
  return { ...server, mails };
}

export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered with. */
  answered: number;
}

export interface WebhookReceiver {
  url: string;
  hooks: Arrivals<ReceivedHook>;
  /** Statuses to answer with, in order; once used up every request gets 204. */
  script: number[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const hooks = new Arrivals<ReceivedHook>();
  const receiver: Partial<WebhookReceiver> & { script: number[] } = { script: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = receiver.script.shift() ?? 204;
      res.statusCode = answered;
      res.end();
      hooks.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}${path}`,
    hooks,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
