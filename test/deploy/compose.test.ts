/**
 * deploy/compose/compose.yaml: PostgreSQL, the service and one standard agent on one host. What it
 * says about the programs matches the code and the Dockerfile: variable names, the ports and probe
 * paths, the build targets, the agent's shutdown time and what a uid per sandbox needs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/agent/config.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import {
  COMPOSE_FILE,
  parseDockerfile,
  readmeEnvNames,
  readYamlDocuments,
  ROOT,
  SANDBOX_CAPABILITIES,
  type Yaml,
} from './deploy-files.ts';

const compose = readYamlDocuments(COMPOSE_FILE)[0];
const { postgres, service, agent } = compose.services as Record<string, Yaml>;
const COMPOSE_DIR = path.dirname(COMPOSE_FILE);

/** Compose's `${NAME:-default}` and `${NAME:?message}` with nothing set: the default, or the name. */
const interpolate = (value: string): string =>
  value.replace(/\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, name: string, fallback?: string) => fallback ?? name);
const seconds = (duration: string): number => {
  const m = /^(\d+)(s|m)$/.exec(duration);
  if (!m) throw new Error(`unexpected duration ${duration}`);
  return Number(m[1]) * (m[2] === 'm' ? 60 : 1);
};

describe('deploy/compose/compose.yaml', () => {
  it('is valid against the Compose Specification schema (test/deploy/fixtures/compose-spec.json)', () => {
    // draft-07 (its $schema is the https form of the URL, which Ajv knows by the http one), with
    // annotations (deprecated) and formats (duration, expose) that are not JSON Schema's.
    const { $schema: _draft07, ...schema } = JSON.parse(
      readFileSync(path.join(import.meta.dirname, 'fixtures/compose-spec.json'), 'utf8'),
    );
    const validate = new Ajv({ strict: false, validateFormats: false, allErrors: true }).compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    const withAgent = (a: Yaml) => ({ ...compose, services: { ...compose.services, agent: a } });
    expect(validate(withAgent({ ...agent, cap_add: 'NET_RAW' })), 'a mistyped field').toBe(false);
    expect(validate(withAgent({ ...agent, stop_grace_periods: '60s' })), 'a misspelt field').toBe(false);
  });

  it('runs PostgreSQL, the service and one agent, each built from a Dockerfile target that exists', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['agent', 'postgres', 'service']);
    const targets = parseDockerfile('Dockerfile').stages.map((s) => s.name);
    for (const s of [service, agent]) {
      expect(path.resolve(COMPOSE_DIR, s.build.context)).toBe(path.resolve(ROOT));
      expect(targets).toContain(s.build.target);
    }
    expect(agent.build.target).toBe('standard');
  });

  it('every variable set is one README lists for that program', () => {
    for (const [s, program] of [
      [service, 'service'],
      [agent, 'agent'],
    ] as const) {
      const known = readmeEnvNames(program);
      for (const name of Object.keys(s.environment)) expect(known, `${program}: ${name}`).toContain(name);
    }
  });

  it("the service's URL for the database is the postgres service's, and its healthcheck asks /-/readiness on the code's default port", () => {
    const url = new URL(interpolate(service.environment.DATABASE_URL));
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('postgres');
    expect(url.username).toBe(postgres.environment.POSTGRES_USER);
    expect(url.pathname).toBe(`/${postgres.environment.POSTGRES_DB}`);
    expect(postgres.environment.POSTGRES_PASSWORD).toMatch(/\$\{POSTGRES_PASSWORD:\?/);
    const port = loadServiceConfig({}).port;
    expect(service.environment.PORT).toBe(String(port));
    expect(service.healthcheck.test.join(' ')).toContain(`http://127.0.0.1:${port}/-/readiness`);
    expect(new URL(agent.environment.API_URL)).toMatchObject({ hostname: 'service', port: String(port) });
  });

  it("the agent's key comes from an env file whose example names API_KEY; its health port is the code's default", () => {
    expect(agent.env_file).toEqual([{ path: './agent.env', required: false }]);
    expect(readFileSync(path.join(COMPOSE_DIR, 'agent.env.example'), 'utf8')).toMatch(/^API_KEY=pl_/m);
    expect(agent.environment.API_KEY).toBeUndefined();
    expect(agent.environment.AGENT_HEALTH_PORT).toBe(String(loadAgentConfig({ API_KEY: 'pl_test' }).healthPort));
  });

  it('Docker waits longer than the agent drains: stop_grace_period > SHUTDOWN_GRACE_SECONDS + 15', () => {
    expect(seconds(agent.stop_grace_period)).toBeGreaterThan(Number(agent.environment.SHUTDOWN_GRACE_SECONDS) + 15);
  });

  it('the agent runs as root with exactly what a uid per sandbox needs, SANDBOX_ISOLATION=uid, no_new_privs and a sticky /tmp', () => {
    expect(agent.user).toBe('0:0');
    expect(agent.cap_drop).toEqual(['ALL']);
    expect([...agent.cap_add].sort()).toEqual([...SANDBOX_CAPABILITIES].sort());
    expect(agent.environment.SANDBOX_ISOLATION).toBe('uid');
    expect(agent.security_opt).toContain('no-new-privileges:true');
    expect(agent.read_only).toBe(true);
    expect(agent.tmpfs).toEqual([expect.stringMatching(/^\/tmp:.*mode=1777/)]);
  });

  it('the service keeps its image user, a read-only root and DATA_DIR on a volume; the spool and the database are volumes', () => {
    expect(service.user).toBeUndefined();
    expect(service.read_only).toBe(true);
    const mounted = (s: Yaml) => s.volumes.map((v: string) => v.split(':')[1]);
    expect(mounted(service)).toContain(service.environment.DATA_DIR);
    expect(mounted(agent)).toContain(agent.environment.SPOOL_DIR);
    expect(mounted(postgres)).toContain('/var/lib/postgresql/data');
    expect(postgres.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(service.depends_on.postgres.condition).toBe('service_healthy');
  });

  it('the database image is the official postgres, pinned by digest (overridable), the pin docs/deploy.md names', () => {
    const image = interpolate(postgres.image);
    expect(image).toMatch(/^postgres:\d+-bookworm@sha256:[0-9a-f]{64}$/);
    expect(postgres.image).toMatch(/^\$\{POSTGRES_IMAGE:-/);
    expect(readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8')).toContain(image);
  });
});
