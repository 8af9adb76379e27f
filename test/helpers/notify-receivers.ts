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

  /** The item that arrived (or arrives) as number `index`, counting from 0. */
  at(index: number): Promise<T> {
    return this.next((item) => this.items.indexOf(item) === index);
  }

  next(accept: (item: T) => boolean = () => true, timeoutMs?: number, what = 'an arrival'): Promise<T> {
    return this.waitFor(1, accept, timeoutMs, what).then((items) => items[0] as T);
  }

  /** Resolves with the first `count` accepted items once that many have arrived. */
  waitFor(
    count: number,
    accept: (item: T) => boolean = () => true,
    timeoutMs?: number,
    what = `${count} arrivals`,
  ): Promise<T[]> {
    const matched = () => this.items.filter(accept);
    if (matched().length >= count) return Promise.resolve(matched().slice(0, count));
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.#waiters = this.#waiters.filter((w) => w !== waiter);
              reject(
                new Error(
                  `timed out after ${timeoutMs} ms waiting for ${what} (${matched().length} of ${count} so far, ${this.items.length} received)`,
                ),
              );
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

/** What a test SMTP server does with a recipient and a message. */
export interface SmtpBehaviour {
  /** The SMTP reply code to refuse an address with (e.g. 550, 450), or undefined to take it. */
  rejectRecipient?: (address: string) => number | undefined;
  /** Sees each message; an error it returns refuses the message with the error's responseCode. */
  accept: (mail: ReceivedMail) => Error | undefined;
}

/** A plain SMTP server on loopback (no STARTTLS: its built-in certificate is self-signed; no AUTH). */
export async function listenSmtp(opts: SmtpBehaviour): Promise<{ url: string; close(): Promise<void> }> {
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const code = opts.rejectRecipient?.(address.address);
      if (code === undefined) return callback();
      callback(Object.assign(new Error(`mailbox ${address.address} refused`), { responseCode: code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        callback(
          opts.accept({
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
  return {
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function startSmtpSink(opts: Pick<SmtpBehaviour, 'rejectRecipient'> = {}): Promise<SmtpSink> {
  const mails = new Arrivals<ReceivedMail>();
  const server = await listenSmtp({
    ...opts,
    accept: (mail) => {
      mails.push(mail);
      return undefined;
    },
  });
  return { ...server, mails };
}

export interface ReceivedHook {
  method: string;
  /** The request target: path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered with; 0 when it did not answer. */
  answered: number;
}

/** A scripted answer: a status, a status with a body, or no answer at all (the request hangs until closed). */
export type ScriptedAnswer = number | { status: number; body: string } | 'hang';

export interface WebhookReceiver {
  url: string;
  hooks: Arrivals<ReceivedHook>;
  /** Answers to give, in order; once used up every request gets 204. */
  script: ScriptedAnswer[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const hooks = new Arrivals<ReceivedHook>();
  const receiver: Partial<WebhookReceiver> & { script: ScriptedAnswer[] } = { script: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = receiver.script.shift() ?? 204;
      const received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      if (answer === 'hang') {
        hooks.push({ ...received, answered: 0 });
        return;
      }
      const { status, body } = typeof answer === 'number' ? { status: answer, body: '' } : answer;
      res.statusCode = status;
      res.end(body);
      hooks.push({ ...received, answered: status });
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
