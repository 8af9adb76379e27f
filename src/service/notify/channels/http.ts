/**
 * One HTTP request to a receiver (a provider's API, a webhook, a gateway), and what its answer means
 * for the delivery: every HTTP sender goes through here, so they all agree on which failures are
 * worth another attempt. Calls go through the outbound guard's dispatcher; redirects are not
 * followed (a receiver answers at its URL).
 */
import { type Dispatcher, request } from 'undici';
import { OutboundRefusedError } from '../../outbound/policy.ts';
import type { SendOutcome } from './types.ts';

export interface HttpSend {
  method: Dispatcher.HttpMethod;
  url: string | URL;
  headers: Record<string, string>;
  body?: string;
}

export interface HttpOptions {
  dispatcher: Dispatcher;
  timeoutMs: number;
  /** Who answered, for the error text: "the webhook", "PagerDuty". */
  receiver: string;
}

/** 408, 425 and 429 say "later"; other 4xx answers say the request itself is refused. */
const RETRYABLE_4XX = new Set([408, 425, 429]);
/** Enough of an answer to show why a receiver refused; the rest is not kept. */
const DETAIL_MAX_CHARS = 500;

export function isRetryableStatus(status: number): boolean {
  return status >= 500 || RETRYABLE_4XX.has(status);
}

export async function sendHttp(req: HttpSend, opts: HttpOptions): Promise<SendOutcome> {
  try {
    const response = await request(req.url, {
      dispatcher: opts.dispatcher,
      method: req.method,
      headers: { 'user-agent': 'outpost-notifier', ...req.headers },
      body: req.body,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const detail = trimDetail(await readCapped(response.body));
    return outcomeOf(response.statusCode, detail, opts.receiver);
  } catch (err) {
    return failureOf(err, opts.receiver);
  }
}

/** POSTs `payload` as JSON: the request of every provider API and gateway. */
export function postJson(
  url: string | URL,
  payload: unknown,
  ctx: { dispatcher: Dispatcher; timeoutMs: number },
  receiver: string,
  headers: Record<string, string> = {},
): Promise<SendOutcome> {
  return sendHttp(
    { method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) },
    { dispatcher: ctx.dispatcher, timeoutMs: ctx.timeoutMs, receiver },
  );
}

function outcomeOf(status: number, detail: string | undefined, receiver: string): SendOutcome {
  if (status >= 200 && status < 300) return detail === undefined ? { ok: true } : { ok: true, detail };
  const failure = {
    ok: false as const,
    permanent: !isRetryableStatus(status),
    error: `${receiver} answered HTTP ${status}`,
  };
  return detail === undefined ? failure : { ...failure, detail };
}

function failureOf(err: unknown, receiver: string): SendOutcome {
  if (err instanceof OutboundRefusedError) return { ok: false, permanent: true, error: err.message };
  const e = err as Error & { code?: string };
  // undici refuses a request it cannot form (a header value with a line break, a bad URL): no retry changes that.
  const permanent = e.code === 'UND_ERR_INVALID_ARG';
  const cause =
    e.name === 'TimeoutError' ? `no answer within the timeout` : `${e.code ? `${e.code} ` : ''}${e.message}`;
  return { ok: false, permanent, error: `the request to ${receiver} failed: ${cause}` };
}

/** Reads at most DETAIL_MAX_CHARS bytes of an answer and drops the rest, so a huge answer costs no memory. */
async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size > DETAIL_MAX_CHARS) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function trimDetail(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  return trimmed.length > DETAIL_MAX_CHARS ? `${trimmed.slice(0, DETAIL_MAX_CHARS)}…` : trimmed;
}
