/**
 * The secrets of the jobs running now, for what is process-wide: the agent's own log lines
 * (../logger.ts) and error reports (../observability.ts). Each job registers its Scrubber while it
 * runs; on release its values stay a while longer (RELEASE_GRACE_MS), because an error report is
 * processed asynchronously and a log line may come after the job's result.
 *
 * scrubActive() costs one size check when no job has secrets, so logging stays cheap then.
 */
import { type Scrubber, Scrubber as ScrubberClass } from './scrubber.ts';

export const RELEASE_GRACE_MS = 60_000;

const active = new Set<Scrubber>();
let combined: ScrubberClass | undefined;
let combinedKey = '';

/** Adds a job's scrubber; the returned function releases it (idempotent). */
export function registerActiveScrubber(scrubber: Scrubber, graceMs = RELEASE_GRACE_MS): () => void {
  active.add(scrubber);
  combined = undefined;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const drop = () => {
      active.delete(scrubber);
      combined = undefined;
    };
    // Without secrets there is nothing to scrub later: keeping it (and a timer) for the grace period
    // would hold every run of the last minute in memory and make each log line walk them all.
    if (graceMs <= 0 || scrubber.size === 0) drop();
    else setTimeout(drop, graceMs).unref();
  };
}

/** Whether any registered job has a secret value now. */
export function hasActiveSecrets(): boolean {
  for (const s of active) if (s.size > 0) return true;
  return false;
}

/** One scrubber over every active job's values; rebuilt when a job comes, goes or adds a value. */
function combinedScrubber(): ScrubberClass {
  const key = [...active].map((s) => s.version).join(',');
  if (!combined || key !== combinedKey) {
    const next = new ScrubberClass();
    for (const s of active) for (const v of s.values()) next.add(v);
    combined = next;
    combinedKey = key;
  }
  return combined;
}

/** `text` with every active job's secrets scrubbed (all forms). */
export function scrubActive(text: string): string {
  if (active.size === 0 || !hasActiveSecrets()) return text;
  return combinedScrubber().scrubText(text);
}

/** Scrubbers registered now (running jobs, and released ones with secrets within their grace). */
export function activeScrubberCount(): number {
  return active.size;
}

/** For tests: forget every registered scrubber at once. */
export function resetActiveScrubbers(): void {
  active.clear();
  combined = undefined;
}
