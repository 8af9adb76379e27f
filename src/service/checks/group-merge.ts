/**
 * How a check group's settings apply to a member check at run time, as pure functions (the rules
 * are listed in docs/api.md "Check groups"). The dispatcher merges the definition it puts into a job
 * (toCheckDefinition); the scheduler asks where and whether a member runs (effectivePlacement).
 */
import type { ApiRequest, CheckDefinition, KeyValue, ScriptRef } from '../../shared/checks/types.ts';
import type { ApiCheckDefaults, StoredCheckGroup } from '../store/check-group-types.ts';
import type { StoredCheck } from '../store/store.ts';

/** The placeholder the reference lets group checks use for the group's base URL. */
export const GROUP_BASE_URL_VARIABLE = '{{GROUP_BASE_URL}}';

/** The group a stored check names, or undefined. A dangling id (group deleted meanwhile) means none. */
export function groupIdOf(check: Pick<StoredCheck, 'body'>): number | undefined {
  const id = check.body.groupId;
  return typeof id === 'number' && Number.isInteger(id) ? id : undefined;
}

export interface Placement {
  /** False when the check or its group is deactivated: nothing is scheduled. */
  activated: boolean;
  /** The check's or its group's muting (either mutes); carried for alerting, a later issue. */
  muted: boolean;
  /** The private locations its runs go to. */
  locationIds: string[];
}

/**
 * Where and whether a check runs. A deactivated group runs none of its checks. A group with private
 * locations runs its checks there, replacing the checks' own; a group without any leaves each check
 * at its own locations.
 */
export function effectivePlacement(
  check: Pick<StoredCheck, 'activated' | 'muted' | 'locationIds'>,
  group: Pick<StoredCheckGroup, 'activated' | 'muted' | 'locationIds'> | undefined,
): Placement {
  if (!group) return { activated: check.activated, muted: check.muted, locationIds: [...check.locationIds] };
  return {
    activated: check.activated && group.activated,
    muted: check.muted || group.muted,
    locationIds: group.locationIds.length > 0 ? [...group.locationIds] : [...check.locationIds],
  };
}

const ABSOLUTE_URL = /^[a-z][a-z\d+.-]*:\/\//i;

/**
 * The group's base URL applied to a check's URL: `{{GROUP_BASE_URL}}` is replaced by it; an empty or
 * relative URL is appended to it (one slash between); an absolute URL is left alone.
 */
export function resolveGroupUrl(checkUrl: string, baseUrl: string | null | undefined): string {
  const base = baseUrl ?? '';
  if (checkUrl.includes(GROUP_BASE_URL_VARIABLE))
    return checkUrl.replaceAll(GROUP_BASE_URL_VARIABLE, base.replace(/\/+$/, ''));
  if (base === '' || ABSOLUTE_URL.test(checkUrl)) return checkUrl;
  if (checkUrl === '') return base;
  if (checkUrl.startsWith('?') || checkUrl.startsWith('#')) return `${base}${checkUrl}`;
  return `${base.replace(/\/+$/, '')}/${checkUrl.replace(/^\/+/, '')}`;
}

/** The check's pairs, then the group's whose key the check does not set (header names ignore case). */
function addMissing(own: KeyValue[], defaults: KeyValue[], sameKey: (a: string, b: string) => boolean): KeyValue[] {
  const extra = defaults.filter((d) => !own.some((o) => sameKey(o.key, d.key)));
  return [...own, ...extra.map(({ key, value }) => ({ key, value }))];
}

/** apiCheckDefaults applied to an API check's request. */
export function mergeApiRequest(request: ApiRequest, defaults: ApiCheckDefaults | undefined): ApiRequest {
  if (!defaults) return request;
  const hasOwnAuth =
    request.basicAuth !== null && (request.basicAuth.username !== '' || request.basicAuth.password !== '');
  return {
    ...request,
    url: resolveGroupUrl(request.url, defaults.url),
    headers: addMissing(request.headers, defaults.headers ?? [], (a, b) => a.toLowerCase() === b.toLowerCase()),
    queryParameters: addMissing(request.queryParameters, defaults.queryParameters ?? [], (a, b) => a === b),
    assertions: [
      ...request.assertions,
      ...(defaults.assertions ?? []).map((a) => ({
        source: a.source as ApiRequest['assertions'][number]['source'],
        comparison: a.comparison as ApiRequest['assertions'][number]['comparison'],
        property: a.property ?? '',
        target: a.target ?? '',
        // As for the check's own: an empty pattern means none.
        regex: a.regex ? a.regex : null,
      })),
    ],
    basicAuth: hasOwnAuth ? request.basicAuth : (defaults.basicAuth ?? request.basicAuth),
  };
}

type Variable = { key: string; value: string; secret: boolean };

function variablesOf(value: unknown): Variable[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((v): v is Variable => typeof v?.key === 'string' && typeof v?.value === 'string')
    .map((v) => ({ key: v.key, value: v.value, secret: v.secret === true }));
}

/** Group variables then the check's; a check variable replaces the group's of the same key. */
export function mergeVariables(groupVars: unknown, checkVars: unknown): Variable[] {
  const own = variablesOf(checkVars);
  return [...variablesOf(groupVars).filter((g) => !own.some((c) => c.key === g.key)), ...own];
}

function scriptOf(from: ScriptRef['from'], script: unknown, snippetId: unknown): ScriptRef | undefined {
  const s = typeof script === 'string' && script.trim() !== '' ? script : null;
  const id = typeof snippetId === 'number' ? snippetId : null;
  return s !== null || id !== null ? { from, script: s, snippetId: id } : undefined;
}

/** Setup runs the group's step then the check's; teardown the check's then the group's. */
export function mergeScripts(
  groupBody: Record<string, unknown>,
  checkBody: Record<string, unknown>,
): { setup: ScriptRef[]; tearDown: ScriptRef[] } {
  const present = (refs: Array<ScriptRef | undefined>) => refs.filter((r): r is ScriptRef => r !== undefined);
  return {
    setup: present([
      scriptOf('group', groupBody.localSetupScript, groupBody.setupSnippetId),
      scriptOf('check', checkBody.localSetupScript ?? checkBody.setupScript, checkBody.setupSnippetId),
    ]),
    tearDown: present([
      scriptOf('check', checkBody.localTearDownScript ?? checkBody.tearDownScript, checkBody.tearDownSnippetId),
      scriptOf('group', groupBody.localTearDownScript, groupBody.tearDownSnippetId),
    ]),
  };
}

/**
 * The definition a member check's job carries: the check's own definition with the group's settings
 * applied. runtimeId: the check's, else the group's, else null (the agent's default runtime; accounts
 * have no default of their own). Without a group the definition is returned unchanged.
 */
export function applyGroup(
  definition: CheckDefinition,
  checkBody: Record<string, unknown>,
  group: Pick<StoredCheckGroup, 'id' | 'body'> | undefined,
): CheckDefinition {
  if (!group) return definition;
  const g = group.body as unknown as Record<string, unknown>;
  const merged = {
    ...definition,
    groupId: group.id,
    runtimeId: definition.runtimeId ?? (typeof g.runtimeId === 'string' ? g.runtimeId : null),
    environmentVariables: mergeVariables(g.environmentVariables, checkBody.environmentVariables),
    scripts: mergeScripts(g, checkBody),
  };
  if (merged.checkType === 'API') {
    return { ...merged, checkType: 'API', request: mergeApiRequest(merged.request, group.body.apiCheckDefaults) };
  }
  return merged as CheckDefinition;
}
