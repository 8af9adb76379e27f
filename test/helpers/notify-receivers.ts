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

/** Resolves with the first item a predicate accepts, from those already there or still to come. */
class Arrivals<T> {
  readonly items: T[] = [];
  #waiters: { accept: (item: T) => boolean; resolve: (item: T) => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.accept(item)) return true;
      w.resolve(item);
      return false;
    });
  }

  next(accept: (item: T) => boolean = () => true): Promise<T> {
    const existing = this.items.find(accept);
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve) => this.#waiters.push({ accept, resolve }));
  }
}

export interface SmtpSink {
  url: string;
  mails: Arrivals<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails = new Arrivals<ReceivedMail>();
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS (its built-in certificate is self-signed), no AUTH.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered with; 'hang': it read the request and never answered. */
  answered: number | 'hang';
}

export interface WebhookReceiver {
  url: string;
  hooks: Arrivals<ReceivedHook>;
  /** Statuses to answer with, in order ('hang': never answer); once used up every request gets 204. */
  script: Array<number | 'hang'>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const hooks = new Arrivals<ReceivedHook>();
  const receiver: Partial<WebhookReceiver> & { script: Array<number | 'hang'> } = { script: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = receiver.script.shift() ?? 204;
      if (answered !== 'hang') {
        res.statusCode = answered;
        res.end();
      }
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
