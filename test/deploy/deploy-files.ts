/**
 * What the deployment tests read: the YAML under deploy/, README's environment variable tables (the
 * list of every variable each program reads, kept with the code by the project's rule), and the
 * JSON patches of a kustomize component applied to the object they patch.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const KUBERNETES_DIR = path.join(ROOT, 'deploy/kubernetes');
export const COMPOSE_FILE = path.join(ROOT, 'deploy/compose/compose.yaml');

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is checked field by field by the tests.
export type Yaml = any;

/** Every document of a YAML file; a syntax error in any of them throws, naming the file. */
export function readYamlDocuments(file: string): Yaml[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0)
      throw new Error(`${path.relative(ROOT, file)}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS();
  });
}

/** The .yaml/.yml files under `dir`, recursively, relative to it. */
export function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.ya?ml$/.test(name))
    .sort();
}

export type Program = 'service' | 'agent';

/** The variable names in the first column of README's table for `program` (`NAME`, `A`, `B` cells). */
export function readmeEnvNames(program: Program): Set<string> {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const heading = program === 'service' ? '### Service (`outpost serve`' : '### Agent (`outpost agent`)';
  const start = readme.indexOf(heading);
  if (start < 0) throw new Error(`README.md has no "${heading}" section`);
  const names = new Set<string>();
  for (const line of readme.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const firstCell = line.startsWith('| `') ? line.split('|')[1] : undefined;
    for (const m of firstCell?.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g) ?? []) names.add(m[1]!);
  }
  return names;
}

interface JsonPatchOp {
  op: string;
  path: string;
  value?: unknown;
}

/**
 * Applies the `add` and `replace` operations of an RFC 6902 patch (the ones kustomize components
 * here use) to a copy of `target`; any other operation, or a path that does not exist, throws.
 */
export function applyJsonPatch(target: Yaml, ops: JsonPatchOp[]): Yaml {
  const doc = structuredClone(target);
  for (const { op, path: pointer, value } of ops) {
    const keys = pointer
      .split('/')
      .slice(1)
      .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = keys.pop()!;
    const parent = keys.reduce((node: Yaml, key) => {
      if (node?.[key] === undefined) throw new Error(`${op} ${pointer}: ${key} does not exist`);
      return node[key];
    }, doc);
    if (op === 'add' && Array.isArray(parent)) parent.splice(last === '-' ? parent.length : Number(last), 0, value);
    else if (op === 'add' || (op === 'replace' && last in parent)) parent[last] = value;
    else throw new Error(`${op} ${pointer}: not supported here or nothing to replace`);
  }
  return doc;
}

/** The container of a pod template by name. */
export function container(deployment: Yaml, name: string): Yaml {
  const found = deployment.spec.template.spec.containers.find((c: Yaml) => c.name === name);
  if (!found) throw new Error(`${deployment.metadata.name} has no container ${name}`);
  return found;
}

/** A container's env entries as name → entry. */
export function envOf(c: Yaml): Map<string, Yaml> {
  return new Map((c.env ?? []).map((e: Yaml) => [e.name, e]));
}

/**
 * What a uid per sandbox needs of a root agent (docs/sandbox.md, "Signals and users"), SETPCAP so
 * setpriv can empty the sandbox's bounding set, and NET_RAW for ICMP: the whole list, in compose
 * and in the Kubernetes component.
 */
export const SANDBOX_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'KILL', 'SETGID', 'SETUID', 'SETPCAP', 'NET_RAW'];

export interface DockerInstruction {
  keyword: string;
  args: string;
}

export interface DockerStage {
  name: string | undefined;
  from: string;
  instructions: DockerInstruction[];
}

/** A Dockerfile's global ARG defaults and its stages, continuation lines joined, comments dropped. */
export function parseDockerfile(file: string): { args: Map<string, string>; stages: DockerStage[] } {
  const text = readFileSync(path.join(ROOT, file), 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const args = new Map<string, string>();
  const stages: DockerStage[] = [];
  for (const line of text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)) {
    const [, keyword = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const [from = '', , name] = rest.split(/\s+/);
      stages.push({ name, from, instructions: [] });
    } else if (stages.length === 0 && upper === 'ARG') {
      const [key = '', value = ''] = rest.split('=');
      args.set(key, value);
    } else {
      stages.at(-1)?.instructions.push({ keyword: upper, args: rest });
    }
  }
  return { args, stages };
}

/** The user a stage's processes run as: its last USER, else its parent stage's, else root. */
export function effectiveUser(stages: DockerStage[], stage: DockerStage): string {
  const own = stage.instructions.filter((i) => i.keyword === 'USER').at(-1);
  if (own) return own.args;
  const parent = stages.find((s) => s.name === stage.from);
  return parent ? effectiveUser(stages, parent) : '0';
}
