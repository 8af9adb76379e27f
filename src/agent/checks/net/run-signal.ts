/**
 * The one abort signal of a protocol check run: the context's (cancel, or the daemon's timeout) or
 * the runner's own timer at ctx.timeoutMs, so a runner keeps its time limit even if nobody else
 * enforces it. It remembers which of the two ended the run, for the result's words.
 */
import type { CheckContext } from '../runner.ts';

export type AbortKind = 'timeout' | 'cancelled';

/** Whether an abort of the context's signal was the run's time limit (rather than a cancel). */
export function isTimeoutReason(reason: unknown, elapsedMs: number, timeoutMs: number): boolean {
  if (reason === 'timeout') return true;
  if (typeof reason === 'object' && reason !== null) {
    const r = reason as { name?: unknown; code?: unknown };
    if (r.name === 'TimeoutError' || r.code === 'ETIMEDOUT' || r.code === 'UND_ERR_ABORTED_TIMEOUT') return true;
  }
  // A plain abort at (about) the limit is the daemon's timer; a few ms of slack for timer jitter.
  return timeoutMs > 0 && elapsedMs >= timeoutMs - 5;
}

export interface RunSignal {
  signal: AbortSignal;
  /** null while the run goes on; then why it was stopped. */
  readonly abortKind: AbortKind | null;
  /** Stops the timer and the listener; call once the run is over. */
  dispose(): void;
}

export function startRunSignal(
  ctx: Pick<CheckContext, 'signal' | 'timeoutMs'>,
  t0: number = performance.now(),
): RunSignal {
  const controller = new AbortController();
  let abortKind: AbortKind | null = null;
  const onContextAbort = (): void => {
    abortKind ??= isTimeoutReason(ctx.signal.reason, performance.now() - t0, ctx.timeoutMs) ? 'timeout' : 'cancelled';
    controller.abort(ctx.signal.reason);
  };
  const timer =
    ctx.timeoutMs > 0
      ? setTimeout(() => {
          abortKind ??= 'timeout';
          controller.abort(new DOMException(`timed out after ${ctx.timeoutMs} ms`, 'TimeoutError'));
        }, ctx.timeoutMs)
      : undefined;
  if (ctx.signal.aborted) onContextAbort();
  else ctx.signal.addEventListener('abort', onContextAbort, { once: true });
  return {
    signal: controller.signal,
    get abortKind() {
      return abortKind;
    },
    dispose() {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onContextAbort);
    },
  };
}

/** Rejects when the signal aborts, so that a step that cannot itself be cancelled does not hold a run. */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal, onAbort?: () => void): Promise<T> {
  if (signal.aborted) {
    onAbort?.();
    p.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => {
      onAbort?.();
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', abort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(e);
      },
    );
  });
}
