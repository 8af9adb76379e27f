import { Agent, type Dispatcher, EnvHttpProxyAgent, request } from './http/undici.ts';
import {
  AGENT_PATHS,
  type DeregisterRequest,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type LeaseRequest,
  type LeaseResponse,
  type ProtocolError,
  type RegisterRequest,
  type RegisterResponse,
  type ReleaseRequest,
  type SubmitResultBatchRequest,
  type SubmitResultBatchResponse,
  type SubmitResultRequest,
  type SubmitResultResponse,
} from '../shared/protocol.ts';
import { VERSION } from '../shared/version.ts';
import type { RetryHint } from './backoff.ts';
import type { ProxyConfig } from './config.ts';

/** The service rejected the key (401): it is wrong or was revoked. Retrying cannot help. */
export class UnauthorizedError extends Error {
  override readonly name = 'UnauthorizedError';
  readonly statusCode = 401;
}

/** Worth retrying with backoff: network failures, timeouts, 5xx, 429 and 408. */
export class TransientError extends Error {
  override readonly name = 'TransientError';
  /** The HTTP status, or undefined when no response arrived (refused, reset, timed out). */
  readonly statusCode: number | undefined;
  /** The wait the service asked for in Retry-After, when it sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, statusCode?: number, options?: ErrorOptions & { retryAfterMs?: number }) {
    super(message, options);
    this.statusCode = statusCode;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** How a failed call should be retried: an unreachable service, or one that answered (maybe with Retry-After). */
export function retryHintOf(err: unknown): RetryHint {
  if (err instanceof TransientError && err.statusCode === undefined) return { unreachable: true };
  if (err instanceof TransientError && err.retryAfterMs !== undefined)
    return { unreachable: false, retryAfterMs: err.retryAfterMs };
  return { unreachable: false };
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Any other 4xx, carrying the service's message (e.g. unknown run 404). Retrying would fail again. */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
  readonly statusCode: number;
  constructor(message: string, statusCode: number) {
    super(message);
    this.statusCode = statusCode;
  }
}

/** What the daemon needs from the service; tests may hand it a fake. */
export interface ServiceApi {
  register(body: RegisterRequest): Promise<RegisterResponse>;
  lease(body: LeaseRequest, signal?: AbortSignal): Promise<LeaseResponse>;
  heartbeat(body: HeartbeatRequest): Promise<HeartbeatResponse>;
  submitResult(body: SubmitResultRequest, signal?: AbortSignal): Promise<SubmitResultResponse>;
  /** Only to a service whose registration answer carried `resultBatchMax`. */
  submitResultBatch(body: SubmitResultBatchRequest, signal?: AbortSignal): Promise<SubmitResultBatchResponse>;
  release(body: ReleaseRequest): Promise<void>;
  deregister(body: DeregisterRequest): Promise<void>;
}

export interface ServiceClientOptions {
  apiUrl: URL;
  apiKey: string;
  proxy?: ProxyConfig;
  version?: string;
  /** headersTimeout/bodyTimeout of every call except lease, whose timeout follows its wait. */
  requestTimeoutMs?: number;
}

/** Slack on top of the long-poll wait: the service answers at `waitSeconds`, then the body must come. */
const LEASE_TIMEOUT_SLACK_MS = 15_000;

/**
 * Builds the dispatcher for the agent's own traffic (service calls and error reports). Proxy values
 * come from our config, never from process.env directly: '' disables undici's own env fallback so
 * the config stays the single source of truth (and tests can pass an env object).
 */
export function createServiceDispatcher(proxy: ProxyConfig | undefined): Dispatcher {
  const keepAlive = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000 };
  if (proxy && (proxy.httpProxy || proxy.httpsProxy)) {
    return new EnvHttpProxyAgent({
      ...keepAlive,
      httpProxy: proxy.httpProxy ?? '',
      httpsProxy: proxy.httpsProxy ?? '',
      noProxy: proxy.noProxy ?? '',
    });
  }
  return new Agent(keepAlive);
}

/** Where the agent's calls go and what each carries. */
export interface ServiceConnection {
  apiUrl: URL;
  apiKey: string;
  dispatcher: Dispatcher;
  /** headersTimeout/bodyTimeout of a call that sets none of its own. */
  timeoutMs: number;
  /** Sent in the user agent; defaults to this build's. */
  version?: string;
}

/** A call the service answered, its body read in full. */
export interface ServiceAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  text: string;
}

/**
 * The HTTP calls of the agent to the service (the job protocol, artifact uploads): the key, the user
 * agent and the timeouts each call carries, and a call that got no whole answer (refused, reset,
 * timed out, body cut off) as a TransientError. Reading the answer is the caller's.
 */
export class ServiceTransport {
  /** The API key lives here and nowhere else after start-up; only send reads it. */
  readonly #apiKey: string;
  readonly #base: URL;
  readonly #userAgent: string;
  readonly #timeoutMs: number;
  readonly dispatcher: Dispatcher;

  constructor(connection: ServiceConnection) {
    this.#apiKey = connection.apiKey;
    this.#base = connection.apiUrl;
    this.dispatcher = connection.dispatcher;
    this.#userAgent = `outpost-agent/${connection.version ?? VERSION}`;
    this.#timeoutMs = connection.timeoutMs;
  }

  get baseUrl(): string {
    return this.#base.toString();
  }

  async send(
    path: string,
    call: {
      method: 'GET' | 'POST' | 'PUT' | 'PATCH';
      /** What error messages start with; the path when not given. */
      label?: string;
      headers: Record<string, string>;
      body: Dispatcher.RequestOptions['body'];
      signal?: AbortSignal | undefined;
      timeoutMs?: number | undefined;
    },
  ): Promise<ServiceAnswer> {
    const label = call.label ?? path;
    const timeout = call.timeoutMs ?? this.#timeoutMs;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(new URL(path, this.#base), {
        method: call.method,
        dispatcher: this.dispatcher,
        headers: {
          ...call.headers,
          authorization: `Bearer ${this.#apiKey}`,
          accept: 'application/json',
          'user-agent': this.#userAgent,
        },
        body: call.body,
        signal: call.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
    } catch (err) {
      // An abort is the caller's decision, not a failure of the service: pass it through untouched.
      if (call.signal?.aborted) throw err;
      const code = (err as { code?: string }).code;
      throw new TransientError(
        `${label}: ${code ? `${code} ` : ''}${(err as Error).message || 'request failed'}`,
        undefined,
        { cause: err },
      );
    }
    try {
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    } catch (err) {
      if (call.signal?.aborted) throw err;
      throw new TransientError(`${label}: response body failed: ${(err as Error).message}`, res.statusCode, {
        cause: err,
      });
    }
  }
}

/** The agent side of the job protocol (src/shared/protocol.ts), over undici. */
export class ServiceClient implements ServiceApi {
  readonly #transport: ServiceTransport;

  constructor(options: ServiceClientOptions) {
    this.#transport = new ServiceTransport({
      apiUrl: options.apiUrl,
      apiKey: options.apiKey,
      dispatcher: createServiceDispatcher(options.proxy),
      timeoutMs: options.requestTimeoutMs ?? 30_000,
      version: options.version,
    });
  }

  /** Shared with the error reporter so its uploads take the same proxy route. */
  get dispatcher(): Dispatcher {
    return this.#transport.dispatcher;
  }

  get baseUrl(): string {
    return this.#transport.baseUrl;
  }

  register(body: RegisterRequest): Promise<RegisterResponse> {
    return this.#post(AGENT_PATHS.register, body);
  }

  /** The long-poll. `signal` lets shutdown cut it at once instead of waiting out `waitSeconds`. */
  lease(body: LeaseRequest, signal?: AbortSignal): Promise<LeaseResponse> {
    return this.#post(AGENT_PATHS.lease, body, {
      signal,
      timeoutMs: body.waitSeconds * 1000 + LEASE_TIMEOUT_SLACK_MS,
    });
  }

  heartbeat(body: HeartbeatRequest): Promise<HeartbeatResponse> {
    return this.#post(AGENT_PATHS.heartbeat, body);
  }

  submitResult(body: SubmitResultRequest, signal?: AbortSignal): Promise<SubmitResultResponse> {
    return this.#post(AGENT_PATHS.results, body, { signal });
  }

  submitResultBatch(body: SubmitResultBatchRequest, signal?: AbortSignal): Promise<SubmitResultBatchResponse> {
    return this.#post(AGENT_PATHS.resultBatches, body, { signal });
  }

  async release(body: ReleaseRequest): Promise<void> {
    await this.#post(AGENT_PATHS.release, body);
  }

  async deregister(body: DeregisterRequest): Promise<void> {
    await this.#post(AGENT_PATHS.deregister, body);
  }

  async close(): Promise<void> {
    await this.#transport.dispatcher.close();
  }

  async #post<T>(path: string, body: unknown, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
    const { status, headers, text } = await this.#transport.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    if (status >= 200 && status < 300) {
      if (text === '') return undefined as T;
      return parseJsonAnswer<T>(path, status, text);
    }
    const message = serviceMessage(text) ?? `HTTP ${status}`;
    if (status === 401) throw new UnauthorizedError(`${path}: ${message}`);
    if (status >= 500 || status === 429 || status === 408) {
      throw new TransientError(`${path}: ${status} ${message}`, status, {
        retryAfterMs: parseRetryAfter(headers['retry-after']),
      });
    }
    throw new PermanentError(`${path}: ${status} ${message}`, status);
  }
}

/** A 2xx answer's JSON; a proxy or load balancer answering with HTML in place of the service is worth a retry. */
export function parseJsonAnswer<T>(label: string, status: number, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new TransientError(`${label}: the response was not JSON (status ${status})`, status);
  }
}

/** The `message` of the service's error answer, if the body is one. */
export function serviceMessage(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<ProtocolError>;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not JSON (a proxy's HTML page): fall back to the status alone, and never echo a page into logs.
  }
  return undefined;
}
