/**
 * Secret scrubbing on the agent (docs/secrets.md). Nothing that leaves the agent may carry a secret:
 * results, check logs, error reports, the agent's own log lines and text artifacts.
 *
 * What is secret in a job:
 *  (a) the values of the job's variables flagged `secret` (check.environmentVariables), and the key
 *      and passphrase of its client certificate (check.tls);
 *  (b) values user code puts into `process.env.OUTPOST_SECRET_*` while it runs;
 *  (c) the values of sensitive headers, whatever they are (SENSITIVE_HEADERS).
 * Each value is matched as given and URL-encoded, form-encoded, JSON-escaped, HTML-escaped and base64
 * (./forms.ts). Values shorter than MIN_SECRET_LENGTH (5) are not scrubbed.
 *
 * API for the sandbox and the runners (the daemon creates one Scrubber per job and passes it to the
 * runner as RunContext.scrubber):
 *  - `scrubber.add(value)`: report a new secret value, e.g. for every `OUTPOST_SECRET_*` variable the
 *    script set (report it as soon as it is known, at the latest before the job's result is built).
 *    From then on it is scrubbed from the job's result, check log, the agent's logs and error reports.
 *  - `scrubber.scrubText(text)`: one string (e.g. a check log before it is stored anywhere).
 *  - `scrubber.scrubDeep(value)`: a copy of an object with every string scrubbed and sensitive headers
 *    redacted (the daemon does this to the RunResult).
 *  - `scrubText(text, check)` (below): for the artifact uploader: a text artifact of a job.
 */
import type { CheckDefinition } from '../../shared/checks/types.ts';
import { scrubActive } from './registry.ts';
import { Scrubber } from './scrubber.ts';

export { formsOf } from './forms.ts';
export { hasActiveSecrets, registerActiveScrubber, scrubActive } from './registry.ts';
export {
  CYCLE,
  isSensitiveHeader,
  MIN_SECRET_LENGTH,
  REDACTED,
  redactHeaders,
  SENSITIVE_HEADERS,
  Scrubber,
} from './scrubber.ts';

/** The prefix of environment variables whose values user code marks as secret at run time. */
export const RUNTIME_SECRET_PREFIX = 'OUTPOST_SECRET_';

/** A job's scrubber, seeded with the values of its secret variables (and OUTPOST_SECRET_* ones). */
export function scrubberForCheck(check: Pick<CheckDefinition, 'environmentVariables' | 'tls'>): Scrubber {
  const scrubber = new Scrubber();
  for (const v of check.environmentVariables ?? []) {
    if (v.secret || v.key.startsWith(RUNTIME_SECRET_PREFIX)) scrubber.add(v.value);
  }
  // A client certificate's private key and passphrase (docs/api.md "Client certificates").
  if (check.tls?.key) scrubber.add(check.tls.key);
  if (check.tls?.passphrase) scrubber.add(check.tls.passphrase);
  return scrubber;
}

/**
 * A text artifact of a job, scrubbed: with the job's scrubber when the uploader has it, else with the
 * job's check (its secret variables) plus every active job's secrets.
 */
export function scrubText(text: string, source: Scrubber | Pick<CheckDefinition, 'environmentVariables'>): string {
  const scrubber = source instanceof Scrubber ? source : scrubberForCheck(source);
  return scrubActive(scrubber.scrubText(text));
}
