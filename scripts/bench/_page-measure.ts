/**
 * Measuring a web page of the service (bench `pages`): the server's own time for each request (see
 * ServerTimes) and what a browser transfers for it, gzip-compressed: the
 * page and every stylesheet, script and icon it links to, each fetched from the service.
 */
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { summarize } from './_stats.ts';

const GZIP = { 'accept-encoding': 'gzip', accept: 'text/html' };

async function get(app: FastifyInstance, url: string, headers: Record<string, string>) {
  const res = await app.inject({ method: 'GET', url, headers: { ...GZIP, ...headers } });
  if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
  return res;
}

/**
 * The server's time for each response: fastify's `reply.elapsedTime` (from the request's arrival to
 * the response handed to the socket), read in an onResponse hook. Add it before the service listens.
 * Times come from requests over loopback, not app.inject: light-my-request kept every injected
 * response reachable, and the growing heap put collector pauses of tens of milliseconds into the
 * figures that a server answering sockets does not have.
 */
export class ServerTimes {
  #waiting: ((ms: number) => void)[] = [];

  constructor(app: FastifyInstance) {
    app.addHook('onResponse', async (_request, reply) => {
      this.#waiting.shift()?.(reply.elapsedTime);
    });
  }

  /** GETs `url` (gzip accepted), reads the whole body, and gives the server's time for it. */
  async get(base: string, url: string): Promise<number> {
    const timed = new Promise<number>((resolve) => this.#waiting.push(resolve));
    const res = await request(`${base}${url}`, { headers: GZIP });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}`);
    return timed;
  }
}

/** p50/p99 (ms) of the server's time for `requests` sequential GETs of `url`, after `warmup` unmeasured ones. */
export async function serverTimes(
  times: ServerTimes,
  base: string,
  url: string,
  opts: { requests: number; warmup: number },
): Promise<ReturnType<typeof summarize>> {
  for (let i = 0; i < opts.warmup; i++) await times.get(base, url);
  const ms: number[] = [];
  for (let i = 0; i < opts.requests; i++) ms.push(await times.get(base, url));
  return summarize(ms);
}

/** The same, each GET following `invalidate` (a write that changes what the page shows): renders, not cache hits. */
export async function coldTimes(
  times: ServerTimes,
  base: string,
  url: string,
  opts: { requests: number; invalidate: (i: number) => Promise<void> },
): Promise<ReturnType<typeof summarize>> {
  const ms: number[] = [];
  for (let i = 0; i < opts.requests; i++) {
    await opts.invalidate(i);
    ms.push(await times.get(base, url));
  }
  return summarize(ms);
}

/** The same-origin URLs a page links to that a browser fetches with it: stylesheets, scripts, icons. */
export function linkedAssets(pageHtml: string): string[] {
  const urls = new Set<string>();
  for (const match of pageHtml.matchAll(/<(?:link|script)\b[^>]*>/g)) {
    const tag = match[0];
    const rel = /\brel="([^"]*)"/.exec(tag)?.[1] ?? '';
    const url = /\b(?:href|src)="([^"]*)"/.exec(tag)?.[1];
    if (!url?.startsWith('/') || !(tag.startsWith('<script') || /\b(stylesheet|icon)\b/.test(rel))) continue;
    urls.add(url.replaceAll('&amp;', '&'));
  }
  return [...urls];
}

export interface Transferred {
  /** Compressed bytes of the page itself. */
  pageBytes: number;
  /** Compressed bytes of what it links to, fetched once each. */
  assetBytes: number;
  totalBytes: number;
  /** The page before compression. */
  rawPageBytes: number;
}

/** What a first visit transfers for `url`, with gzip (the encoding every browser accepts). */
export async function transferred(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string> = {},
): Promise<Transferred> {
  const page = await get(app, url, headers);
  const rawPageBytes = Buffer.byteLength(
    (await app.inject({ method: 'GET', url, headers: { accept: 'text/html', ...headers } })).body,
  );
  let assetBytes = 0;
  for (const asset of linkedAssets(rawHtml(page))) assetBytes += (await get(app, asset, headers)).rawPayload.length;
  const pageBytes = page.rawPayload.length;
  return { pageBytes, assetBytes, totalBytes: pageBytes + assetBytes, rawPageBytes };
}

function rawHtml(res: { rawPayload: Buffer; headers: Record<string, unknown> }): string {
  if (res.headers['content-encoding'] !== 'gzip') return res.rawPayload.toString('utf8');
  return process.getBuiltinModule('node:zlib').gunzipSync(res.rawPayload).toString('utf8');
}
