import os from 'node:os';
import type { ErrorEvent, Exception, NodeClient, StackFrame } from '@sentry/node';
import { type Dispatcher, request } from './http/undici.ts';
import { VERSION } from '../shared/version.ts';
import type { ErrorSink, Logger } from './logger.ts';
import { scrubActive } from './scrub/registry.ts';

/**
 * External error reporting (spec, Events 3): error-level events with message, stack trace, agent
 * version, platform and runtime version, and nothing else. No API keys, environment, check
 * configuration, URLs, headers or bodies leave the agent. EXTERNAL_OBSERVABILITY=off means Sentry is
 * never initialised: no client exists, so nothing can be sent.
 *
 * The SDK is loaded on the first error, not at start: importing @sentry/node would be most of an idle
 * agent's memory, and most agents report nothing most of the time.
 */

type SentryModule = typeof import('@sentry/node');

const REDACTED = '[redacted]';

/** Things that must never leave the agent, even inside an error message. Order matters: URLs first. */
const SCRUB_PATTERNS: RegExp[] = [
  // Anything URL-like: check targets, the service URL, proxy URLs with credentials.
  /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi,
  // Private-location keys, whatever their length.
  /pl_\S+/g,
  // Credentials in header form, with or without the header name in front.
  /\b(?:proxy-)?authorization\b\s*[:=]\s*[^\n,;]*/gi,
  /\b(?:set-)?cookie\b\s*[:=]\s*[^\n;]*/gi,
  /\b(?:x-api-key|api[-_]key|x-service-account)\b\s*[:=]\s*[^\n,;]*/gi,
  /\b(?:bearer|basic)\s+\S+/gi,
];

export function scrub(text: string): string {
  // The running jobs' secrets first, in every form (src/agent/scrub/registry.ts), then the patterns.
  let out = scrubActive(text);
  for (const pattern of SCRUB_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}

function keepFrame(frame: StackFrame): StackFrame {
  // Only position and name: context lines and vars could hold source text or values with secrets.
  const kept: StackFrame = {};
  if (frame.filename !== undefined) kept.filename = scrub(frame.filename);
  if (frame.function !== undefined) kept.function = scrub(frame.function);
  if (frame.lineno !== undefined) kept.lineno = frame.lineno;
  if (frame.colno !== undefined) kept.colno = frame.colno;
  return kept;
}

function keepException(ex: Exception): Exception {
  const kept: Exception = {};
  if (ex.type !== undefined) kept.type = scrub(ex.type);
  if (ex.value !== undefined) kept.value = scrub(ex.value);
  if (ex.stacktrace?.frames) kept.stacktrace = { frames: ex.stacktrace.frames.map(keepFrame) };
  return kept;
}

/**
 * Rebuilds the event from an allow-list instead of deleting known fields: anything a future SDK
 * version adds (request data, breadcrumbs, tags, user, device...) is dropped by default.
 */
export function sanitizeEvent(event: ErrorEvent): ErrorEvent {
  const clean: ErrorEvent = { type: undefined } as ErrorEvent;
  if (event.event_id !== undefined) clean.event_id = event.event_id;
  if (event.timestamp !== undefined) clean.timestamp = event.timestamp;
  if (event.level !== undefined) clean.level = event.level;
  if (event.release !== undefined) clean.release = event.release;
  if (event.platform !== undefined) clean.platform = event.platform;
  const logMessage = (event.contexts?.log as { message?: unknown } | undefined)?.message;
  const message =
    typeof event.message === 'string' ? event.message : typeof logMessage === 'string' ? logMessage : undefined;
  if (message !== undefined) clean.message = scrub(message);
  if (event.exception?.values) clean.exception = { values: event.exception.values.map(keepException) };
  clean.contexts = {
    runtime: { name: 'node', version: process.version },
    os: { name: os.type(), version: os.release() },
  };
  delete (clean as { type?: unknown }).type;
  return clean;
}

type TransportOptions = Parameters<SentryModule['makeNodeTransport']>[0];

/**
 * A Sentry transport over undici and the agent's own dispatcher, so reports take the same proxy
 * route as every other outbound call (the default transport uses node:http and its own proxy logic).
 */
export function makeUndiciTransport(Sentry: SentryModule, dispatcher: Dispatcher) {
  return (options: TransportOptions) =>
    Sentry.createTransport(options, async (req) => {
      const res = await request(options.url, {
        method: 'POST',
        dispatcher,
        headers: { ...options.headers, 'content-type': 'application/x-sentry-envelope' },
        body: req.body,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await res.body.dump();
      const header = (name: string): string | null => {
        const v = res.headers[name];
        return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
      };
      return {
        statusCode: res.statusCode,
        headers: { 'x-sentry-rate-limits': header('x-sentry-rate-limits'), 'retry-after': header('retry-after') },
      };
    });
}

export interface ObservabilityOptions {
  /** false when EXTERNAL_OBSERVABILITY=off. */
  enabled: boolean;
  dispatcher: Dispatcher;
  version?: string;
  log?: Logger;
}

/** The error reporter; created at start, initialised when register tells us the DSN. */
export class Observability implements ErrorSink {
  readonly #enabled: boolean;
  readonly #dispatcher: Dispatcher;
  readonly #version: string;
  #log: Logger | undefined;
  #dsn: string | undefined;
  #client: Promise<{ Sentry: SentryModule; client: NodeClient | undefined }> | undefined;
  /** Captures still waiting for the SDK to load; flush waits for them. */
  readonly #inFlight = new Set<Promise<void>>();
  #processHandlers: Array<[string, (arg: never) => void]> = [];

  constructor(options: ObservabilityOptions) {
    this.#enabled = options.enabled;
    this.#dispatcher = options.dispatcher;
    this.#version = options.version ?? VERSION;
    this.#log = options.log;
  }

  /** True when errors will be reported: turned on, and the service gave a DSN. */
  get active(): boolean {
    return this.#dsn !== undefined;
  }

  setLogger(log: Logger): void {
    this.#log = log;
  }

  /** Starts reporting to `dsn`; does nothing when turned off or when the service takes no reports. */
  init(dsn: string | null): void {
    if (!this.#enabled || !dsn || this.#dsn) return;
    this.#dsn = dsn;
    this.#log?.info('error reporting is on (EXTERNAL_OBSERVABILITY=off turns it off)');
  }

  #sdk(): Promise<{ Sentry: SentryModule; client: NodeClient | undefined }> {
    const dsn = this.#dsn;
    this.#client ??= import('@sentry/node').then((Sentry) => ({
      Sentry,
      client: Sentry.init({
        dsn,
        release: this.#version,
        environment: 'production',
        // No default integrations: they add HTTP/console breadcrumbs, request data, local variables,
        // module lists and context we do not send. Runtime and OS are added by sanitizeEvent.
        defaultIntegrations: false,
        integrations: [],
        // SDK 11 replaced `sendDefaultPii: false` with per-category data collection: all of it off.
        dataCollection: {
          userInfo: false,
          cookies: false,
          httpHeaders: false,
          httpBodies: [],
          urlQueryParams: false,
          graphQL: { document: false, variables: false },
          genAI: { inputs: false, outputs: false },
          mcp: { inputs: false, outputs: false },
          databaseQueryData: false,
          queues: false,
          stackFrameVariables: false,
          frameContextLines: 0,
        },
        sendClientReports: false,
        enableRuntimeChannelInjection: false,
        enableOpenTelemetrySetup: false,
        maxBreadcrumbs: 0,
        includeLocalVariables: false,
        transport: makeUndiciTransport(Sentry, this.#dispatcher),
        beforeSend: (event) => sanitizeEvent(event),
        beforeSendTransaction: () => null,
        beforeBreadcrumb: () => null,
      }),
    }));
    return this.#client;
  }

  capture(err: unknown, message?: string): void {
    if (!this.#dsn) return;
    const done: Promise<void> = this.#sdk()
      .then(({ Sentry }) => {
        if (err instanceof Error) {
          Sentry.captureException(err, message ? { contexts: { log: { message } } } : undefined);
        } else if (message) {
          Sentry.captureMessage(message, 'error');
        }
      })
      .catch(() => {
        // Reporting must never take the agent down; the error itself is in the agent's own log.
      })
      .finally(() => this.#inFlight.delete(done));
    this.#inFlight.add(done);
  }

  /**
   * Reports crashes. An uncaught exception leaves the process in an unknown state, so after reporting
   * we exit 1 and let the supervisor restart us; a stray rejected promise is reported and logged.
   */
  installProcessHandlers(exit: (code: number) => void = (code) => process.exit(code)): void {
    const onException = (err: Error) => {
      this.#log?.fatal({ err }, 'uncaught exception; exiting');
      this.capture(err);
      void this.flush(2_000).finally(() => exit(1));
    };
    const onRejection = (reason: unknown) => {
      this.#log?.error(
        { err: reason instanceof Error ? reason : new Error(String(reason)) },
        'unhandled promise rejection',
      );
    };
    process.on('uncaughtException', onException);
    process.on('unhandledRejection', onRejection);
    this.#processHandlers.push(['uncaughtException', onException], ['unhandledRejection', onRejection]);
  }

  removeProcessHandlers(): void {
    for (const [event, handler] of this.#processHandlers) process.off(event, handler as (arg: unknown) => void);
    this.#processHandlers = [];
  }

  /** Waits until queued reports are sent (true) or the time is up (false). */
  async flush(timeoutMs: number): Promise<boolean> {
    if (!this.#client) return true;
    await Promise.all(this.#inFlight);
    const { client } = await this.#client;
    return client ? client.flush(timeoutMs) : true;
  }

  /** Flushes and shuts the client down (tests, and the end of the agent's life). */
  async close(timeoutMs = 2_000): Promise<void> {
    if (!this.#client) return;
    await Promise.all(this.#inFlight);
    const { client } = await this.#client;
    await client?.close(timeoutMs);
    this.#client = undefined;
  }
}
