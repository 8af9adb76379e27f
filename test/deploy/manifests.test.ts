/**
 * deploy/kubernetes: every object is valid against the Kubernetes OpenAPI schemas (kubernetes-models;
 * KEDA's ScaledObject against KEDA's own CRD, test/deploy/fixtures), the kustomizations hold
 * together, and what the manifests say about the programs matches the code: probe paths and ports,
 * the variable names each program reads, the shutdown timing, and the security promise (user code
 * touches nothing outside its sandbox) in the base and with the sandbox-isolation component.
 *
 * The schemas, like the API server's, admit unknown fields, so each field a deployment depends on is
 * also read by name below: a misspelt one fails there.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Namespace, PersistentVolumeClaim, Service } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { loadAgentConfig } from '../../src/agent/config.ts';
import { type HealthServer, startHealthServer } from '../../src/agent/health.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { startRunningService } from '../helpers/running-service.ts';
import { readyHealthSource } from '../support/health-source.ts';
import {
  applyJsonPatch,
  container,
  envOf,
  KUBERNETES_DIR,
  readmeEnvNames,
  readYamlDocuments,
  SANDBOX_CAPABILITIES,
  type Yaml,
  yamlFilesUnder,
} from './deploy-files.ts';

const KEDA_CRD = path.join(import.meta.dirname, 'fixtures/keda.sh_scaledobjects.yaml');

const kedaSchema = readYamlDocuments(KEDA_CRD)[0].spec.versions.find((v: Yaml) => v.name === 'v1alpha1').schema
  .openAPIV3Schema;
// OpenAPI v3 as CRDs write it: x-kubernetes-* keywords and int32/int64 formats are not JSON Schema's.
const validateScaledObject = new Ajv({ strict: false, validateFormats: false, allErrors: true }).compile(kedaSchema);

/** Validates one object against its kind's schema; a kind without a schema here fails. */
function validate(obj: Yaml): void {
  const models: Record<string, { new (data: Yaml): { validate(): void } }> = {
    'v1/Namespace': Namespace,
    'v1/Service': Service,
    'v1/PersistentVolumeClaim': PersistentVolumeClaim,
    'apps/v1/Deployment': Deployment,
    'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  };
  const key = `${obj.apiVersion}/${obj.kind}`;
  if (key === 'keda.sh/v1alpha1/ScaledObject') {
    if (!validateScaledObject(obj))
      throw new Error(`ScaledObject ${obj.metadata?.name}: ${JSON.stringify(validateScaledObject.errors)}`);
    return;
  }
  const Model = models[key];
  if (!Model)
    throw new Error(`${key} (${obj.metadata?.name}) has no schema in this test; add its kubernetes-models class`);
  new Model(obj).validate();
}

const kustomization = readYamlDocuments(path.join(KUBERNETES_DIR, 'kustomization.yaml'))[0];
const objects: Yaml[] = kustomization.resources.flatMap((file: string) =>
  readYamlDocuments(path.join(KUBERNETES_DIR, file)),
);
const find = (kind: string, name: string): Yaml => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among the kustomization's resources`);
  return found;
};
const agent = find('Deployment', 'outpost-agent');
const service = find('Deployment', 'outpost-service');
const component = readYamlDocuments(path.join(KUBERNETES_DIR, 'sandbox-isolation/kustomization.yaml'))[0];
/** The agent Deployment as `components: [sandbox-isolation]` makes it. */
const isolatedAgent: Yaml = component.patches.reduce((target: Yaml, p: Yaml) => {
  if (p.target.kind !== target.kind || p.target.name !== target.metadata.name)
    throw new Error(`a patch of sandbox-isolation targets ${p.target.kind} ${p.target.name}`);
  return applyJsonPatch(target, parse(p.patch));
}, agent);

describe('deploy/kubernetes', () => {
  it('every manifest parses and each object is valid against the Kubernetes OpenAPI schemas (ScaledObject: KEDA CRD)', () => {
    const files = yamlFilesUnder(KUBERNETES_DIR).filter((f) => path.basename(f) !== 'kustomization.yaml');
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      for (const obj of readYamlDocuments(path.join(KUBERNETES_DIR, file))) {
        expect(() => validate(obj), file).not.toThrow();
      }
    }
  });

  it('a misspelt or mistyped field fails validation (the schemas are really applied)', () => {
    expect(() => validate({ ...agent, spec: { ...agent.spec, replicas: 'two' } })).toThrow(/replicas must be integer/);
    const so = find('ScaledObject', 'outpost-agent');
    expect(() => validate({ ...so, spec: { ...so.spec, minReplicaCount: 'two' } })).toThrow(/minReplicaCount/);
    expect(() => validate({ ...so, spec: { triggers: so.spec.triggers } })).toThrow(/scaleTargetRef/);
  });

  it('the kustomization lists every manifest beside it, and each resource and component exists', () => {
    const beside = yamlFilesUnder(KUBERNETES_DIR).filter((f) => !f.includes('/') && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(beside);
    for (const name of [...kustomization.resources, 'sandbox-isolation/kustomization.yaml'])
      expect(existsSync(path.join(KUBERNETES_DIR, name)), name).toBe(true);
    expect(component).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component' });
  });

  it('with the sandbox-isolation component the agent Deployment is still valid', () => {
    expect(() => validate(isolatedAgent)).not.toThrow();
  });

  // kustomize itself, where kubectl is installed: it renders both variants, and what it renders is
  // exactly what the tests here validated (the base as read, the component as applyJsonPatch makes it).
  const kubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
  it.skipIf(!kubectl)(
    'kubectl kustomize renders the base and the sandbox-isolation variant to the objects validated here',
    () => {
      const render = (dir: string): Yaml[] =>
        parseAllDocuments(execFileSync(kubectl!, ['kustomize', dir], { encoding: 'utf8' })).map((d) => {
          const obj = d.toJS();
          delete obj.metadata.labels['app.kubernetes.io/part-of'];
          if (Object.keys(obj.metadata.labels).length === 0) delete obj.metadata.labels;
          return obj;
        });
      const byKey = (list: Yaml[]) => new Map(list.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
      expect(byKey(render(KUBERNETES_DIR))).toEqual(byKey(objects));
      const dir = mkdtempSync(path.join(tmpdir(), 'outpost-kustomize-'));
      try {
        cpSync(KUBERNETES_DIR, dir, { recursive: true });
        writeFileSync(
          path.join(dir, 'kustomization.yaml'),
          stringify({ ...kustomization, components: ['sandbox-isolation'] }),
        );
        const rendered = byKey(render(dir));
        expect(rendered.get('Deployment/outpost-agent')).toEqual(isolatedAgent);
        expect(rendered.size).toBe(objects.length);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('every namespaced object is in a namespace the kustomization creates', () => {
    const namespaces = objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name);
    for (const o of objects.filter((o) => o.kind !== 'Namespace'))
      expect(namespaces, `${o.kind} ${o.metadata.name}`).toContain(o.metadata.namespace);
  });
});

describe('deploy/kubernetes matches the code', () => {
  const agentDefaults = loadAgentConfig({ API_KEY: 'pl_test' });
  const serviceDefaults = loadServiceConfig({});
  let health: HealthServer;
  beforeAll(async () => {
    // The agent's real probe server, with a daemon that is registered and whose job loop runs.
    health = await startHealthServer({ host: '127.0.0.1', port: 0, source: readyHealthSource() });
  });
  afterAll(() => health.close());

  const probesOf = (c: Yaml) => [c.readinessProbe, c.livenessProbe, c.startupProbe].filter(Boolean);
  const portNamed = (c: Yaml, name: string) => c.ports.find((p: Yaml) => p.name === name)?.containerPort;

  it("the agent's probes are paths its health server answers, on the health port it listens on by default", async () => {
    const c = container(agent, 'agent');
    expect(portNamed(c, 'health')).toBe(agentDefaults.healthPort);
    expect(envOf(c).get('AGENT_HEALTH_PORT')?.value).toBe(String(agentDefaults.healthPort));
    expect(c.readinessProbe.httpGet.path).toBe('/-/readiness');
    expect(c.livenessProbe.httpGet.path).toBe('/-/liveness');
    for (const probe of probesOf(c)) {
      expect(probe.httpGet.port).toBe('health');
      const res = await fetch(`http://127.0.0.1:${health.port}${probe.httpGet.path}`);
      expect(res.status, probe.httpGet.path).toBe(200);
    }
  });

  it("the service's probes are /-/readiness and /-/liveness on the port it listens on by default, which its Service targets", () => {
    const c = container(service, 'service');
    expect(portNamed(c, 'http')).toBe(serviceDefaults.port);
    expect(envOf(c).get('PORT')?.value).toBe(String(serviceDefaults.port));
    expect(c.readinessProbe.httpGet).toEqual({ path: '/-/readiness', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/-/liveness', port: 'http' });
    const svc = find('Service', 'outpost-service');
    expect(svc.spec.selector).toEqual(service.spec.selector.matchLabels);
    expect(svc.spec.ports).toEqual([expect.objectContaining({ port: serviceDefaults.port, targetPort: 'http' })]);
  });

  it("the service's probe paths are ones the real service answers with 200, without a key", async () => {
    const running = await startRunningService();
    try {
      for (const probe of probesOf(container(service, 'service'))) {
        const res = await fetch(`${running.baseUrl}${probe.httpGet.path}`);
        expect(res.status, probe.httpGet.path).toBe(200);
      }
    } finally {
      await running.stop();
    }
  });

  it("the agent's API_URL is the service's Service, in its namespace, on its port", () => {
    const svc = find('Service', 'outpost-service');
    const url = new URL(envOf(container(agent, 'agent')).get('API_URL').value);
    expect(url.hostname).toBe(`${svc.metadata.name}.${svc.metadata.namespace}.svc`);
    expect(Number(url.port)).toBe(svc.spec.ports[0].port);
  });

  it('every variable set is one README lists for that program; the keys come from Secrets', () => {
    const check = (c: Yaml, program: 'service' | 'agent') => {
      const known = readmeEnvNames(program);
      for (const name of envOf(c).keys()) expect(known, `${program}: ${name}`).toContain(name);
    };
    check(container(agent, 'agent'), 'agent');
    check(container(isolatedAgent, 'agent'), 'agent');
    check(container(service, 'service'), 'service');
    expect(envOf(container(agent, 'agent')).get('API_KEY').valueFrom.secretKeyRef).toEqual({
      name: 'outpost-agent',
      key: 'API_KEY',
    });
    expect(envOf(container(service, 'service')).get('DATABASE_URL').valueFrom.secretKeyRef).toEqual({
      name: 'outpost-service',
      key: 'DATABASE_URL',
    });
    expect(envOf(container(service, 'service')).get('SECRETS_KEY').valueFrom.secretKeyRef).toEqual({
      name: 'outpost-service',
      key: 'SECRETS_KEY',
    });
  });

  it('the kubelet waits longer than the agent drains: terminationGracePeriodSeconds > SHUTDOWN_GRACE_SECONDS + 15', () => {
    for (const d of [agent, isolatedAgent]) {
      const grace = Number(
        envOf(container(d, 'agent')).get('SHUTDOWN_GRACE_SECONDS')?.value ?? agentDefaults.shutdownGraceSeconds,
      );
      // After the grace: up to 5 s for aborted runs to settle, 2 s for error reports, the release,
      // spool and deregister calls.
      expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(grace + 15);
    }
    const drain = envOf(container(service, 'service')).get('SHUTDOWN_DRAIN_SECONDS')?.value;
    if (drain !== undefined)
      expect(service.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(Number(drain) + 5);
  });

  it('every path the programs write is a volume (the root file system is read-only): /tmp, SPOOL_DIR, DATA_DIR', () => {
    const mounts = (d: Yaml, name: string) => container(d, name).volumeMounts.map((m: Yaml) => m.mountPath);
    for (const d of [agent, isolatedAgent])
      expect(mounts(d, 'agent')).toEqual(
        expect.arrayContaining(['/tmp', envOf(container(d, 'agent')).get('SPOOL_DIR').value]),
      );
    expect(mounts(service, 'service')).toEqual(
      expect.arrayContaining(['/tmp', envOf(container(service, 'service')).get('DATA_DIR').value]),
    );
    for (const [d, name] of [
      [agent, 'agent'],
      [isolatedAgent, 'agent'],
      [service, 'service'],
    ] as const) {
      const volumes = d.spec.template.spec.volumes.map((v: Yaml) => v.name);
      for (const m of container(d, name).volumeMounts) expect(volumes).toContain(m.name);
      expect(container(d, name).securityContext.readOnlyRootFilesystem).toBe(true);
    }
  });
});

describe('deploy/kubernetes keeps user code in its sandbox and the pods unprivileged', () => {
  const podSecurity = (d: Yaml) => d.spec.template.spec.securityContext;

  it('the agent runs as 10001, non-root, seccomp RuntimeDefault, every capability dropped but NET_RAW', () => {
    expect(podSecurity(agent)).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container(agent, 'agent').securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      capabilities: { drop: ['ALL'], add: ['NET_RAW'] },
    });
    // The uptime image carries no runtime for user code, so there is no sandbox to keep.
    expect(container(agent, 'agent').image).toMatch(/^outpost-agent-uptime[:@]/);
  });

  it('a non-root agent given NET_RAW leaves allowPrivilegeEscalation on: fping gets NET_RAW from its file capability', () => {
    const sc = container(agent, 'agent').securityContext;
    if (sc.capabilities.add.includes('NET_RAW') && sc.runAsUser !== 0)
      expect(sc.allowPrivilegeEscalation).not.toBe(false);
  });

  it('the service runs as 10001 under the restricted profile: no privilege escalation, no capability', () => {
    expect(podSecurity(service)).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const sc = container(service, 'service').securityContext;
    expect(sc).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(sc.capabilities.add).toBeUndefined();
    expect(find('Namespace', service.metadata.namespace).metadata.labels['pod-security.kubernetes.io/enforce']).toBe(
      'restricted',
    );
  });

  it('with sandbox-isolation: the standard image as root with exactly the capabilities a uid per sandbox needs, SANDBOX_ISOLATION=uid', () => {
    const c = container(isolatedAgent, 'agent');
    expect(c.image).toMatch(/^outpost-agent[:@]/);
    expect(c.securityContext).toMatchObject({
      runAsUser: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect([...c.securityContext.capabilities.add].sort()).toEqual([...SANDBOX_CAPABILITIES].sort());
    expect(envOf(c).get('SANDBOX_ISOLATION')?.value).toBe('uid');
    expect(podSecurity(isolatedAgent).runAsNonRoot).toBeUndefined();
  });

  it('with sandbox-isolation: /tmp gets the sticky bit before the agent starts (emptyDir is 0777 without it)', () => {
    const [init] = isolatedAgent.spec.template.spec.initContainers;
    expect(init.command).toEqual(['/bin/chmod', '1777', '/tmp']);
    const mountsOf = (c: Yaml) => Object.fromEntries(c.volumeMounts.map((m: Yaml) => [m.mountPath, m.name]));
    expect(mountsOf(init)).toEqual({ '/tmp': mountsOf(container(isolatedAgent, 'agent'))['/tmp'] });
    expect(init.securityContext.capabilities).toEqual({ drop: ['ALL'] });
  });

  it('every container asks for CPU and memory and has a memory limit', () => {
    for (const d of [agent, isolatedAgent, service]) {
      const spec = d.spec.template.spec;
      for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
        expect(c.resources.requests, `${d.metadata.name}/${c.name}`).toMatchObject({
          cpu: expect.anything(),
          memory: expect.anything(),
        });
        expect(c.resources.limits?.memory, `${d.metadata.name}/${c.name}`).toBeDefined();
      }
    }
  });

  it('each Deployment has a PodDisruptionBudget over its pods, and two or more replicas', () => {
    for (const d of [agent, service]) {
      const pdb = objects.find(
        (o) => o.kind === 'PodDisruptionBudget' && o.metadata.namespace === d.metadata.namespace,
      );
      expect(pdb?.spec.selector.matchLabels, d.metadata.name).toEqual(d.spec.selector.matchLabels);
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    }
    expect(service.spec.replicas).toBe(2);
    // The agents' count is KEDA's alone: a count in the Deployment would reset it on every apply.
    expect(agent.spec.replicas).toBeUndefined();
    expect(find('ScaledObject', 'outpost-agent').spec.minReplicaCount).toBeGreaterThanOrEqual(2);
  });

  it("KEDA scales the agent Deployment on the location's queue depth through Prometheus triggers KEDA can read", () => {
    const so = find('ScaledObject', 'outpost-agent');
    expect(so.metadata.namespace).toBe(agent.metadata.namespace);
    expect(so.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: agent.metadata.name });
    // KEDA's prometheus scaler requires serverAddress, query and threshold (pkg/scalers/prometheus_scaler.go).
    for (const t of so.spec.triggers) {
      expect(t.type).toBe('prometheus');
      expect(new URL(t.metadata.serverAddress).protocol).toMatch(/^https?:$/);
      expect(Number(t.metadata.threshold)).toBeGreaterThan(0);
    }
    expect(so.spec.triggers.map((t: Yaml) => t.metadata.query).join('\n')).toMatch(
      /outpost_service_queue_depth\{location="LOCATION_ID"\}/,
    );
  });
});

describe('why the agent leaves allowPrivilegeEscalation on (the kernel, not the manifest)', () => {
  const canTest = process.getuid?.() === 0 && existsSync('/usr/bin/fping') && existsSync('/usr/bin/setpriv');
  /** Runs fping once as uid 10001 with only NET_RAW in the bounding set, through a shell as the agent does. */
  const fpingAsAgent = (noNewPrivs: boolean): number => {
    const args = [
      '--reuid=10001',
      '--regid=10001',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all,+net_raw',
    ];
    if (noNewPrivs) args.push('--no-new-privs');
    try {
      execFileSync('/usr/bin/setpriv', [...args, '/bin/sh', '-c', 'fping -C1 -q -t 500 127.0.0.1'], {
        stdio: 'ignore',
        cwd: '/',
      });
      return 0;
    } catch (err) {
      return (err as { status: number }).status;
    }
  };

  it.skipIf(!canTest)('a non-root fping pings with NET_RAW in the bounding set, and cannot under no_new_privs', () => {
    expect(fpingAsAgent(false)).toBe(0);
    expect(fpingAsAgent(true)).not.toBe(0);
  });
});
