/** The environment of a suite run's install and tests (./run-suite.ts). */
import type { PlaywrightCheckDefinition } from '../../shared/checks/types.ts';
import type { SuiteRunnerConfig } from './config.ts';
import { enginePath, type ResolvedEngine } from './engines.ts';

export const SUITE_MARKER_VAR = 'OUTPOST_SUITE_ID';

const SAFE_LANG = /^[A-Za-z0-9_.@-]{1,64}$/;
const SAFE_TZ = /^[A-Za-z0-9_+\-/:.]{1,64}$/;

/** The environment of both steps, built from nothing: the agent's own variables never reach the suite. */
export function baseEnv(o: {
  check: PlaywrightCheckDefinition;
  engine: ResolvedEngine;
  config: SuiteRunnerConfig;
  home: string;
  tmp: string;
  marker: string;
  agentEnv: NodeJS.ProcessEnv;
}) {
  const env: Record<string, string> = {};
  // The check's variables first: what the agent sets below wins over them.
  for (const v of o.check.environmentVariables ?? []) env[v.key] = v.value;
  delete env.CI;
  const lang = o.agentEnv.LANG && SAFE_LANG.test(o.agentEnv.LANG) ? o.agentEnv.LANG : 'C.UTF-8';
  const tz = o.agentEnv.TZ && SAFE_TZ.test(o.agentEnv.TZ) && !o.agentEnv.TZ.includes('..') ? o.agentEnv.TZ : 'UTC';
  Object.assign(env, {
    PATH: enginePath(o.config.enginesDir, o.engine),
    HOME: o.home,
    TMPDIR: o.tmp,
    LANG: lang,
    TZ: tz,
    NODE_OPTIONS: '',
    FORCE_COLOR: '0',
    OUTPOST: 'true',
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    [SUITE_MARKER_VAR]: o.marker,
  });
  if (o.check.testSession) env.CI = 'true';
  return env;
}

/** The proxy variables, both spellings, and the extra CA file: for the install only. */
export function installOnlyEnv(config: SuiteRunnerConfig): Record<string, string> {
  const env: Record<string, string> = {};
  const set = (name: string, value: string | undefined) => {
    if (value === undefined) return;
    env[name] = value;
    env[name.toLowerCase()] = value;
  };
  set('HTTP_PROXY', config.proxy.httpProxy);
  set('HTTPS_PROXY', config.proxy.httpsProxy);
  set('NO_PROXY', config.proxy.noProxy);
  if (config.extraCaCerts) env.NODE_EXTRA_CA_CERTS = config.extraCaCerts;
  // npm asks the registry for its own newer version on every run otherwise.
  env.npm_config_update_notifier = 'false';
  return env;
}
