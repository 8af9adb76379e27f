/**
 * The HTTP exchange of an API check: builds the request from the check definition, sends it over a
 * fresh connection per hop (a new undici Client with the agent's own connector, destroyed after),
 * follows redirects by hand when asked, and reads the response body up to a cap.
 */
import { Client } from '../../http/undici.ts';
import type { ApiRequest, ApiTlsDetails, CheckTlsMaterial, KeyValue } from '../../../shared/checks/types.ts';
import { VERSION } from '../../../shared/version.ts';
import { type HttpVersion, type ResolvedAddress, type ResolvedVia, createConnector } from './connect.ts';
import { type RequestPhase, TargetError } from './errors.ts';
import { type HopMarks, newHop } from './timings.ts';
import { RESPONSE_BODY_CAP_BYTES, readBody } from './body.ts';

// Not `import ... from 'node:http'`: an ES import of node:http builds a facade over all its exports,
// and reading http.WebSocket/MessageEvent/CloseEvent for it loads Node's bundled copy of undici, a
// second undici in memory. getBuiltinModule returns the module without touching those getters.
const { STATUS_CODES } = process.getBuiltinModule('node:http');

/** The Accept-Encoding sent unless the check sets its own: the encodings readBody decodes. */
export const DEFAULT_ACCEPT_ENCODING = 'gzip, deflate, br';

/** Redirects followed at most (like browsers' and undici's usual limit). */
export const MAX_REDIRECTS = 10;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * What every hop's Client is destroyed with once its exchange is over. Without an error undici makes
 * a new ClientDestroyedError per call, and Node formats its stack when it destroys the socket with it:
 * CPU spent on every run for an error nobody reads. This one's stack is formatted once. It is never reported: by the time it is used, the hop's outcome is decided.
 */
const HOP_DONE = Object.assign(new Error('API check hop finished'), { code: 'UND_ERR_DESTROYED' });

/** A request ready to send, and the record of it that goes into the result. */
export interface PreparedRequest {
  method: string;
  url: URL;
  /** Header pairs in order; duplicates kept. */
  headers: Array<[string, string]>;
  body: string | undefined;
  recorded: {
    method: string;
    url: string;
    data: string;
    headers: Record<string, string>;
    params: Record<string, string>;
  };
}

function hasHeader(headers: Array<[string, string]>, name: string): boolean {
  const n = name.toLowerCase();
  return headers.some(([k]) => k.toLowerCase() === n);
}

function withoutHeaders(headers: Array<[string, string]>, names: string[]): Array<[string, string]> {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return headers.filter(([k]) => !drop.has(k.toLowerCase()));
}

/** Joins key/value pairs into a record; a repeated key's values are joined with ', ' (HTTP's list form). */
function toRecord(pairs: Array<[string, string]> | KeyValue[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const [k, v] = Array.isArray(p) ? p : [p.key, p.value];
    out[k] = k in out ? `${out[k]}, ${v}` : v;
  }
  return out;
}

/** FORM bodies may be written as a JSON object of fields; anything else is sent as written. */
function formBody(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(parsed)) params.append(k, typeof v === 'string' ? v : JSON.stringify(v));
      return params.toString();
    }
  } catch {
    // not JSON: already urlencoded (or meant to be sent raw)
  }
  return body;
}

/**
 * Builds the request. Throws TargetError for a URL the agent cannot send (the check definition is
 * wrong, which the user fixes, so it is a failed run, not an agent error).
 */
export function prepareRequest(req: ApiRequest): PreparedRequest {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    throw new TargetError('ERR_INVALID_URL', `Invalid URL: "${req.url}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TargetError('ERR_UNSUPPORTED_PROTOCOL', `Unsupported URL scheme "${url.protocol}" (use http or https)`);
  }
  for (const q of req.queryParameters ?? []) url.searchParams.append(q.key, q.value);

  const headers: Array<[string, string]> = (req.headers ?? []).map((h) => [h.key, h.value]);
  if (req.basicAuth && (req.basicAuth.username || req.basicAuth.password)) {
    const token = Buffer.from(`${req.basicAuth.username}:${req.basicAuth.password}`, 'utf8').toString('base64');
    // basicAuth is the explicit setting for it, so it wins over an Authorization header.
    headers.splice(0, headers.length, ...withoutHeaders(headers, ['authorization']), [
      'authorization',
      `Basic ${token}`,
    ]);
  }
  if (!hasHeader(headers, 'user-agent')) headers.push(['user-agent', `Outpost/${VERSION} (API check)`]);
  // As browsers and the reference's runner ask; readBody decodes what comes. The check's own header wins.
  if (!hasHeader(headers, 'accept-encoding')) headers.push(['accept-encoding', DEFAULT_ACCEPT_ENCODING]);

  const method = req.method ?? 'GET';
  let body: string | undefined;
  const raw = req.body ?? '';
  // HEAD never carries a body; NONE means no body whatever the body field holds.
  if (method !== 'HEAD' && req.bodyType !== 'NONE' && raw !== '') {
    switch (req.bodyType) {
      case 'JSON':
      case 'GRAPHQL':
        // GRAPHQL bodies are the JSON document ({"query": ...}) as the user wrote it.
        body = raw;
        if (!hasHeader(headers, 'content-type')) headers.push(['content-type', 'application/json']);
        break;
      case 'FORM':
        body = formBody(raw);
        if (!hasHeader(headers, 'content-type')) headers.push(['content-type', 'application/x-www-form-urlencoded']);
        break;
      default:
        body = raw;
    }
  }
  return {
    method,
    url,
    headers,
    body,
    recorded: {
      method,
      url: url.toString(),
      data: body ?? '',
      headers: toRecord(headers),
      params: toRecord(req.queryParameters ?? []),
    },
  };
}

/** What the exchange produced. */
export interface RawResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
  bodyTruncated: boolean;
  /** Decoded bytes read from the body (up to the hard limit). */
  bodyBytes: number;
  /** Whether the body was read to its end (false when the hard limit stopped the read). */
  bodyComplete: boolean;
  /** Why the body could not be decoded as its Content-Encoding says (then `body` is empty), else null. */
  bodyError: string | null;
  /** The HTTP version of the (last hop's) connection: '2' when the server chose h2 in ALPN. */
  httpVersion: HttpVersion;
  /** Whether the decoded body was larger than the check's maxResponseBytes (then `failure` says so). */
  bodyOverLimit: boolean;
  /** Why the run fails although this response came (the redirect limit, maxResponseBytes), else null. */
  failure: string | null;
}

export interface ExchangeState {
  hops: HopMarks[];
  phase: RequestPhase;
  /** URL of the current (finally: last) hop. */
  url: URL;
  redirects: Array<{ url: string; status: number }>;
  address: ResolvedAddress | null;
  resolvedVia: ResolvedVia | null;
  tls: ApiTlsDetails | null;
  /** The HTTP version of the current (finally: last) hop's connection. */
  httpVersion?: HttpVersion;
}

export interface ExchangeOptions {
  followRedirects: boolean;
  skipSSL: boolean;
  ipFamily: 'IPv4' | 'IPv6';
  useOsDnsResolver: boolean;
  signal: AbortSignal;
  /** The check's maxResponseBytes (decoded bytes), or null for none. */
  maxResponseBytes?: number | null;
  /** The check's own TLS material (client certificate, extra CAs), if any. */
  tls?: CheckTlsMaterial;
}

/** Lower-case names (undici gives them so), repeated headers joined with ', '. */
export function normalizeHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** A fresh Client for one hop, with the agent's connector reporting progress into `state` and `hop`. */
function hopClient(url: URL, o: ExchangeOptions, state: ExchangeState, hop: HopMarks): InstanceType<typeof Client> {
  return new Client(url.origin, {
    connect: createConnector({
      ipFamily: o.ipFamily,
      useOsDnsResolver: o.useOsDnsResolver,
      skipSSL: o.skipSSL,
      signal: o.signal,
      tls: o.tls,
      hop,
      onPhase: (p) => {
        state.phase = p;
      },
      onAddress: (a, via) => {
        state.address = a;
        state.resolvedVia = via;
      },
      onTls: (d) => {
        state.tls = d;
      },
      onHttpVersion: (v) => {
        state.httpVersion = v;
      },
    }),
    // The connector offers h2 and HTTP/1.1 by ALPN; undici speaks whichever the server chose.
    allowH2: true,
    pipelining: 1,
    // The run's own timeout (the signal) bounds everything; undici's would only race it.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}

/** What one hop sends. */
interface HopRequest {
  method: string;
  url: URL;
  headers: Array<[string, string]>;
  body: string | undefined;
}

/** The request a redirect leads to, as browsers make it. Throws TargetError for a location it cannot follow. */
function redirected(from: HopRequest, status: number, location: string): HopRequest {
  let next: URL;
  try {
    next = new URL(location, from.url);
  } catch {
    throw new TargetError('ERR_INVALID_URL', `Invalid redirect location "${location}"`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new TargetError('ERR_UNSUPPORTED_PROTOCOL', `Redirect to unsupported URL scheme "${next.protocol}"`);
  }
  let { method, headers, body } = from;
  // 303 (and 301/302 after a POST) continue with GET and no body; 307/308 repeat the request as it was.
  if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    headers = withoutHeaders(headers, ['content-type', 'content-length']);
  }
  // Credentials are for the origin they were configured for, never for another one.
  if (next.origin !== from.url.origin) headers = withoutHeaders(headers, ['authorization', 'cookie']);
  return { method, url: next, headers: withoutHeaders(headers, ['host']), body };
}

/** Why a run fails on a body past the check's maxResponseBytes. */
export function overLimitMessage(limit: number): string {
  return `Response body larger than maxResponseBytes (${limit} bytes, counted after decoding): the agent stopped reading it`;
}

/**
 * Sends the request, following redirects if the check says so (at most MAX_REDIRECTS; past them the
 * last redirect is the response, with `failure` saying so). Each hop runs on a new Client that is
 * destroyed afterwards: no connection or TLS session is ever reused, so every run measures a real
 * DNS lookup, TCP connect and TLS handshake. Errors propagate (the caller names them with the
 * state's phase and address).
 */
export async function exchange(req: PreparedRequest, o: ExchangeOptions, state: ExchangeState): Promise<RawResponse> {
  let hopReq: HopRequest = { method: req.method, url: req.url, headers: req.headers, body: req.body };
  for (let redirects = 0; ; redirects++) {
    const { url } = hopReq;
    state.url = url;
    const hop = newHop();
    state.hops.push(hop);
    // The certificate is the last hop's: a redirect from https to http leaves none.
    state.tls = null;
    // 'dns' once undici calls the connector; before that undici only checks the request.
    state.phase = 'setup';
    const client = hopClient(url, o, state, hop);
    try {
      const res = await client.request({
        path: `${url.pathname}${url.search}`,
        method: hopReq.method as 'GET',
        headers: hopReq.headers.flat(),
        body: hopReq.body,
        signal: o.signal,
      });
      hop.response = performance.now();
      state.phase = 'body';
      const resHeaders = normalizeHeaders(res.headers);
      const location = resHeaders['location'];
      const redirect = o.followRedirects && REDIRECT_STATUSES.has(res.statusCode) && location !== undefined;
      if (redirect && redirects < MAX_REDIRECTS) {
        await res.body.dump({ limit: RESPONSE_BODY_CAP_BYTES }).catch(() => {});
        hop.end = performance.now();
        state.redirects.push({ url: url.toString(), status: res.statusCode });
        hopReq = redirected(hopReq, res.statusCode, location);
        continue;
      }
      const limit = o.maxResponseBytes ?? null;
      const read = await readBody(res.body, resHeaders['content-encoding'], limit);
      hop.end = performance.now();
      return {
        status: res.statusCode,
        statusText: STATUS_CODES[res.statusCode] ?? '',
        headers: resHeaders,
        body: read.text,
        bodyTruncated: read.truncated,
        bodyBytes: read.bytes,
        bodyComplete: read.complete,
        bodyError: read.decodeError,
        bodyOverLimit: read.overLimit,
        httpVersion: state.httpVersion ?? '1.1',
        failure: redirect
          ? `Too many redirects (${MAX_REDIRECTS})`
          : read.overLimit
            ? overLimitMessage(limit ?? 0)
            : null,
      };
    } finally {
      // destroy, not close: nothing is left to send, and a socket still streaming a body is cut now.
      await client.destroy(HOP_DONE).catch(() => {});
    }
  }
}
