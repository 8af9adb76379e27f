/**
 * Compiles the ICMP helper (outpost-icmp.c) with the machine's C compiler, for the tests and the
 * benchmark; the Docker image compiles it in its build stage (Dockerfile).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const HELPER_SOURCE = fileURLToPath(new URL('outpost-icmp.c', import.meta.url));

/** The flags the Dockerfile uses too: warnings are errors, so a sloppy change fails here first. */
export const HELPER_CFLAGS = ['-O2', '-Wall', '-Wextra', '-Werror'] as const;

/** Writes the binary to `out` and returns it; throws with the compiler's words when it fails. */
export function buildIcmpHelper(out: string, cc = process.env.CC || 'cc'): string {
  const r = spawnSync(cc, [...HELPER_CFLAGS, '-o', out, HELPER_SOURCE], { encoding: 'utf8' });
  if (r.error) throw new Error(`could not run the C compiler ${cc} (CC) to build the ICMP helper: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`the ICMP helper did not compile (${cc} exited with ${r.status}):\n${r.stderr}`);
  return out;
}
