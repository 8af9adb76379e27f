import pino, { type DestinationStream, type Logger } from 'pino';
import type { Job } from '../shared/protocol.ts';
import { VERSION } from '../shared/version.ts';
import type { AgentLogLevel } from './config.ts';
import { hasActiveSecrets, scrubActive } from './scrub/registry.ts';

export type { Logger } from 'pino';

/** The reference agent's level names mapped to pino's; LOG is its "normal" level, so it means info. */
export const PINO_LEVELS: Record<AgentLogLevel, pino.Level> = {
  DEBUG: 'debug',
  LOG: 'info',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Where error-level log events go besides stdout (the Sentry reporter). A sink rather than a direct
 * import so the logger exists before the service tells us the DSN at register time.
 */
export interface ErrorSink {
  capture(err: unknown, message?: string): void;
}

/**
 * Paths that could carry a secret if someone ever logs a config, a request or headers. The key is
 * never put into log objects on purpose; this is the safety net in case it slips in.
 */
export const REDACT_PATHS = [
  'apiKey',
  'API_KEY',
  'key',
  'authorization',
  'Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.apiKey',
  '*.API_KEY',
  '*.key',
  '*.authorization',
  '*.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'req.headers.authorization',
  'config.apiKey',
];

export interface AgentLoggerOptions {
  level: AgentLogLevel;
  /** Defaults to stdout; tests pass a stream to read the lines. */
  destination?: DestinationStream;
  errorSink?: ErrorSink;
  version?: string;
}

function errorOf(args: unknown[]): { err: unknown; message: string | undefined } | undefined {
  const [first, second] = args;
  const message = typeof second === 'string' ? second : typeof first === 'string' ? first : undefined;
  if (first instanceof Error) return { err: first, message };
  if (first && typeof first === 'object' && 'err' in first && (first as { err: unknown }).err instanceof Error) {
    return { err: (first as { err: unknown }).err, message };
  }
  return undefined;
}

export function createAgentLogger(options: AgentLoggerOptions): Logger {
  const sink = options.errorSink;
  return pino(
    {
      level: PINO_LEVELS[options.level],
      base: { service: 'outpost-agent', version: options.version ?? VERSION },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      hooks: {
        // Error-level events with an Error attached are what we report externally (spec, Events 3).
        logMethod(args, method, level) {
          if (sink && level >= 50) {
            const found = errorOf(args);
            if (found) {
              try {
                sink.capture(found.err, found.message);
              } catch {
                // Reporting must never break logging.
              }
            }
          }
          method.apply(this, args);
        },
      },
    },
    scrubbingDestination(options.destination ?? pino.destination({ dest: 1, sync: true })),
  );
}

/**
 * Every line passes through the running jobs' secrets (src/agent/scrub/) before it is written, so a
 * secret that reaches a log line by any path (a message, an error, a binding) is scrubbed in all its
 * forms, JSON-escaped included. With no secrets active a line costs one check.
 */
export function scrubbingDestination(destination: DestinationStream): DestinationStream {
  const target = destination as DestinationStream & { flush?: (cb?: () => void) => void; flushSync?: () => void };
  const wrapped: DestinationStream & { flush?: (cb?: () => void) => void; flushSync?: () => void } = {
    write: (line: string) => target.write(hasActiveSecrets() ? scrubActive(line) : line),
  };
  if (typeof target.flush === 'function') wrapped.flush = (cb?: () => void) => target.flush?.(cb);
  if (typeof target.flushSync === 'function') wrapped.flushSync = () => target.flushSync?.();
  return wrapped;
}

/** A child logger for one run, so every line of it can be found by runId. */
export function jobLogger(parent: Logger, job: Pick<Job, 'runId' | 'check'>): Logger {
  return parent.child({ runId: job.runId, checkId: job.check.id, checkType: job.check.checkType });
}

/** Flush buffered lines (no-op for a sync destination), e.g. before the process exits. */
export function flushLogger(log: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      log.flush(() => resolve());
    } catch {
      resolve();
    }
  });
}
