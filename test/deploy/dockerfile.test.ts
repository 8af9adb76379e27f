/**
 * The Dockerfiles, read (no Docker engine runs where Outpost is developed): every image runs as the
 * numeric user 10001:10001, the base image is the Node major the project runs on and is either
 * pinned by digest or documented as a tag to pin at build time, and the standard agent keeps
 * refusing to run user code unprotected.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELPER_CFLAGS } from '../../src/agent/checks/icmp/helper/build.ts';
import { loadAgentConfig } from '../../src/agent/config.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { type DockerStage, effectiveUser, parseDockerfile, ROOT } from './deploy-files.ts';

const { args, stages } = parseDockerfile('Dockerfile');
const stage = (name: string): DockerStage => {
  const found = stages.find((s) => s.name === name);
  if (!found) throw new Error(`Dockerfile has no stage ${name}`);
  return found;
};
const argsOf = (s: DockerStage, keyword: string): string[] =>
  s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
/** `ENV A=1 B=2` instructions of a stage and its parents, as one map (later wins). */
const envOf = (s: DockerStage): Map<string, string> => {
  const parent = stages.find((p) => p.name === s.from);
  const env = new Map(parent ? envOf(parent) : []);
  for (const line of argsOf(s, 'ENV')) for (const [, k, v] of line.matchAll(/(\w+)=(\S+)/g)) env.set(k!, v!);
  return env;
};
const IMAGES = ['service', 'uptime', 'standard'];

describe('Dockerfile', () => {
  it('has the service target beside the agent targets, and the standard agent is the default (last) stage', () => {
    expect(stages.map((s) => s.name)).toEqual(expect.arrayContaining([...IMAGES, 'build', 'base']));
    expect(stages.at(-1)?.name).toBe('standard');
    expect(argsOf(stage('service'), 'CMD')).toEqual(['["serve"]']);
    expect(argsOf(stage('uptime'), 'CMD')).toEqual(['["agent"]']);
  });

  it('every image runs as the numeric user 10001:10001, created with those numbers', () => {
    for (const name of IMAGES) expect(effectiveUser(stages, stage(name)), name).toBe('10001:10001');
    const base = argsOf(stage('base'), 'RUN').join(' ');
    expect(base).toMatch(/groupadd --gid 10001 outpost/);
    expect(base).toMatch(/useradd --uid 10001 --gid 10001 /);
    expect(
      effectiveUser(parseDockerfile('Dockerfile.dev').stages, parseDockerfile('Dockerfile.dev').stages.at(-1)!),
    ).toBe('10001:10001');
  });

  it('every FROM is an earlier stage or the NODE_IMAGE argument: node:<the Node major package.json pins>-bookworm-slim', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const major = /\d+/.exec(pkg.devDependencies.node)![0];
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's own build argument reference.
    const nodeImageArg = '${NODE_IMAGE}';
    stages.forEach((s, i) => {
      const earlier = stages.slice(0, i).map((e) => e.name);
      expect(earlier.includes(s.from) || s.from === nodeImageArg, `FROM ${s.from}`).toBe(true);
    });
    expect(args.get('NODE_IMAGE')).toMatch(new RegExp(`^node:${major}-bookworm-slim@sha256:[0-9a-f]{64}$`));
  });

  it('the base image is pinned by digest, and docs/deploy.md names the same pin', () => {
    const image = args.get('NODE_IMAGE')!;
    expect(image).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8')).toContain(image);
  });

  it("the service image: DATA_DIR is a volume, PORT is exposed, the healthcheck asks /-/liveness; the code's defaults", () => {
    const env = envOf(stage('service'));
    const defaults = loadServiceConfig({});
    expect(argsOf(stage('service'), 'VOLUME')).toEqual([`["${env.get('DATA_DIR')}"]`]);
    expect(argsOf(stage('service'), 'EXPOSE')).toEqual([String(defaults.port)]);
    expect(env.get('PORT')).toBe(String(defaults.port));
    expect(argsOf(stage('service'), 'HEALTHCHECK').join(' ')).toMatch(/process\.env\.PORT\|\|8080\)\+'\/-\/liveness'/);
  });

  it("the agent images: the health port is the code's default, SPOOL_DIR a volume; the standard one sets SANDBOX_ISOLATION=uid", () => {
    const defaults = loadAgentConfig({ API_KEY: 'pl_test' });
    for (const name of ['uptime', 'standard'])
      expect(envOf(stage(name)).get('AGENT_HEALTH_PORT')).toBe(String(defaults.healthPort));
    expect(argsOf(stage('uptime'), 'VOLUME')).toEqual([`["${envOf(stage('uptime')).get('SPOOL_DIR')}"]`]);
    expect(argsOf(stage('uptime'), 'HEALTHCHECK').join(' ')).toMatch(/AGENT_HEALTH_PORT\|\|8081\)\+'\/-\/liveness'/);
    expect(envOf(stage('standard')).get('SANDBOX_ISOLATION')).toBe('uid');
    expect(envOf(stage('uptime')).get('SANDBOX_ISOLATION')).toBeUndefined();
  });

  it('the agent images carry the ICMP helper: compiled in the build stage, NET_RAW as a file capability, named by ICMP_HELPER_PATH', () => {
    const helper = envOf(stage('uptime')).get('ICMP_HELPER_PATH');
    expect(helper).toBe('/usr/local/libexec/outpost-icmp');
    expect(envOf(stage('standard')).get('ICMP_HELPER_PATH')).toBe(helper);
    // The flags the tests build it with, so the image's helper is the tested one.
    expect(argsOf(stage('build'), 'RUN').join(' ')).toContain(
      `cc ${HELPER_CFLAGS.join(' ')} -o /src/outpost-icmp src/agent/checks/icmp/helper/outpost-icmp.c`,
    );
    expect(argsOf(stage('uptime'), 'COPY')).toContain(`--from=build /src/outpost-icmp ${helper}`);
    expect(argsOf(stage('uptime'), 'RUN').join(' ')).toContain(`setcap cap_net_raw=ep ${helper}`);
  });

  it('the agent images strip setuid and setgid bits after each package install, so fping is the only privilege an exec can gain', () => {
    for (const name of ['uptime', 'standard']) {
      const installs = argsOf(stage(name), 'RUN').filter((r) => r.includes('apt-get install'));
      expect(installs.length, name).toBeGreaterThan(0);
      for (const run of installs)
        expect(run, name).toMatch(/find \/ -xdev -type f -perm \/6000 -exec chmod ug-s \{\} \+/);
    }
  });
});
