/**
 * The sandbox's environment and Node flags. The environment is built from nothing (execa's
 * extendEnv: false): the agent's own variables — API_KEY, proxy URLs with their credentials,
 * NODE_OPTIONS, anything an operator set — never reach user code. The check's variables are not
 * here either: the bootstrap puts them into process.env per step, after Node started, so they
 * cannot change Node's flags (docs/sandbox.md).
 */
import type { Runtime } from '../runtimes.ts';
import type { SandboxLimits } from './types.ts';

/** The marker every sandbox process carries, to find what it started (procfs.ts). */
export const SANDBOX_MARKER_VAR = 'OUTPOST_SANDBOX_ID';

const SAFE_LANG = /^[A-Za-z0-9_.@-]{1,64}$/;
const SAFE_TZ = /^[A-Za-z0-9_+\-/:.]{1,64}$/;

export function sandboxEnv(
  runtime: Runtime,
  jobDir: string,
  sandboxId: string,
  agentEnv: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const lang = agentEnv.LANG && SAFE_LANG.test(agentEnv.LANG) ? agentEnv.LANG : 'C.UTF-8';
  const tz = agentEnv.TZ && SAFE_TZ.test(agentEnv.TZ) && !agentEnv.TZ.includes('..') ? agentEnv.TZ : 'UTC';
  return {
    PATH: `${runtime.binDir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: jobDir,
    TMPDIR: jobDir,
    LANG: lang,
    TZ: tz,
    // Empty on purpose: an inherited NODE_OPTIONS could widen the permissions the flags below set.
    NODE_OPTIONS: '',
    [SANDBOX_MARKER_VAR]: sandboxId,
  };
}

/**
 * Node's flags: the heap cap always; with `permissions`, the permission model limited to reading
 * the runtime (its libraries), the job folder and the bootstrap, writing only the job folder, and no
 * child processes, workers, addons, WASI or inspector (none of the --allow-* flags for them).
 * One --allow-fs-* flag per path: Node 22 and 24 both take repeated flags.
 */
export function sandboxNodeFlags(
  runtime: Runtime,
  jobDir: string,
  bootstrapPath: string,
  limits: SandboxLimits,
  permissions: boolean,
): string[] {
  const flags = [`--max-old-space-size=${limits.heapMb}`];
  if (permissions) {
    flags.push(
      '--permission',
      `--allow-fs-read=${runtime.dir}`,
      `--allow-fs-read=${jobDir}`,
      `--allow-fs-read=${bootstrapPath}`,
      `--allow-fs-write=${jobDir}`,
    );
  }
  return flags;
}
