/**
 * The run-time merge of a group's settings into a member check (src/service/checks/group-merge.ts):
 * one test per rule of docs/api.md "Check groups".
 */
import { describe, expect, it } from 'vitest';
import {
  applyGroup,
  effectivePlacement,
  mergeApiRequest,
  mergeScripts,
  mergeVariables,
  resolveGroupUrl,
} from '../../src/service/checks/group-merge.ts';
import type { ApiCheckDefaults, CheckGroupBody, StoredCheckGroup } from '../../src/service/store/check-group-types.ts';
import type { ApiCheckDefinition, ApiRequest, CheckDefinition } from '../../src/shared/checks/types.ts';
import { apiRequest, checkGroupBody } from '../support/accounts-check-bodies.ts';

const request = (over: Partial<ApiRequest> = {}): ApiRequest =>
  apiRequest({ url: 'https://own.example/health', ...over });

const defaults = (over: Partial<ApiCheckDefaults> = {}): ApiCheckDefaults => ({
  url: '',
  headers: [],
  queryParameters: [],
  assertions: [],
  basicAuth: null,
  ...over,
});

function group(body: Partial<CheckGroupBody> = {}, over: Partial<StoredCheckGroup> = {}): StoredCheckGroup {
  return {
    id: 7,
    accountId: 'acc',
    name: 'g',
    activated: true,
    muted: false,
    concurrency: 3,
    locationIds: [],
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: null,
    body: checkGroupBody('g', body),
    ...over,
  };
}

const apiDefinition = (over: Partial<ApiCheckDefinition> = {}): ApiCheckDefinition => ({
  id: 'c1',
  accountId: 'acc',
  name: 'c',
  checkType: 'API',
  shouldFail: false,
  runtimeId: null,
  request: request(),
  degradedResponseTime: 5000,
  maxResponseTime: 20000,
  ...over,
});

describe('base URL', () => {
  it('prefixes a relative check URL with one slash between', () => {
    expect(resolveGroupUrl('/health', 'https://api.example.com/v1/')).toBe('https://api.example.com/v1/health');
    expect(resolveGroupUrl('health', 'https://api.example.com/v1')).toBe('https://api.example.com/v1/health');
  });
  it('uses the base URL for an empty check URL and appends a bare query', () => {
    expect(resolveGroupUrl('', 'https://api.example.com')).toBe('https://api.example.com');
    expect(resolveGroupUrl('?a=1', 'https://api.example.com/x')).toBe('https://api.example.com/x?a=1');
  });
  it('replaces {{GROUP_BASE_URL}} and leaves absolute URLs alone', () => {
    expect(resolveGroupUrl('{{GROUP_BASE_URL}}/users', 'https://api.example.com/')).toBe(
      'https://api.example.com/users',
    );
    expect(resolveGroupUrl('https://own.example/x', 'https://api.example.com')).toBe('https://own.example/x');
  });
  it('changes nothing without a base URL', () => {
    expect(resolveGroupUrl('/health', '')).toBe('/health');
    expect(resolveGroupUrl('/health', null)).toBe('/health');
  });
});

describe('apiCheckDefaults', () => {
  it("adds the group's headers unless the check sets the same name, in any letter case", () => {
    const merged = mergeApiRequest(
      request({ headers: [{ key: 'X-Env', value: 'check' }] }),
      defaults({
        headers: [
          { key: 'x-env', value: 'group', locked: false },
          { key: 'X-Team', value: 'ops', locked: false },
        ],
      }),
    );
    expect(merged.headers).toEqual([
      { key: 'X-Env', value: 'check' },
      { key: 'X-Team', value: 'ops' },
    ]);
  });
  it('adds query parameters unless the check sets the same key (case-sensitive)', () => {
    const merged = mergeApiRequest(
      request({ queryParameters: [{ key: 'page', value: '2' }] }),
      defaults({
        queryParameters: [
          { key: 'page', value: '1' },
          { key: 'Page', value: '9' },
        ],
      }),
    );
    expect(merged.queryParameters).toEqual([
      { key: 'page', value: '2' },
      { key: 'Page', value: '9' },
    ]);
  });
  it("appends the group's assertions after the check's", () => {
    const own = {
      source: 'STATUS_CODE' as const,
      comparison: 'EQUALS' as const,
      property: '',
      target: '200',
      regex: null,
    };
    const merged = mergeApiRequest(
      request({ assertions: [own] }),
      defaults({
        assertions: [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', property: '', target: '800', regex: '' }],
      }),
    );
    expect(merged.assertions).toEqual([
      own,
      { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', property: '', target: '800', regex: null },
    ]);
  });
  it("uses the group's basic auth only when the check has none", () => {
    const groupAuth = defaults({ basicAuth: { username: 'g', password: 'gp' } });
    expect(mergeApiRequest(request(), groupAuth).basicAuth).toEqual({ username: 'g', password: 'gp' });
    expect(mergeApiRequest(request({ basicAuth: { username: '', password: '' } }), groupAuth).basicAuth).toEqual({
      username: 'g',
      password: 'gp',
    });
    expect(mergeApiRequest(request({ basicAuth: { username: 'c', password: 'cp' } }), groupAuth).basicAuth).toEqual({
      username: 'c',
      password: 'cp',
    });
  });
});

describe('variables and scripts', () => {
  it('lists group variables then the check’s, the check winning on the same key', () => {
    expect(
      mergeVariables(
        [
          { key: 'A', value: 'ga', secret: false },
          { key: 'B', value: 'gb', secret: true },
        ],
        [{ key: 'B', value: 'cb' }],
      ),
    ).toEqual([
      { key: 'A', value: 'ga', secret: false },
      { key: 'B', value: 'cb', secret: false },
    ]);
  });
  it('runs setup group then check and teardown check then group; snippets count as steps', () => {
    const scripts = mergeScripts(
      { localSetupScript: 'gs()', tearDownSnippetId: 4 },
      { localSetupScript: 'cs()', localTearDownScript: 'ct()' },
    );
    expect(scripts.setup).toEqual([
      { from: 'group', script: 'gs()', snippetId: null },
      { from: 'check', script: 'cs()', snippetId: null },
    ]);
    expect(scripts.tearDown).toEqual([
      { from: 'check', script: 'ct()', snippetId: null },
      { from: 'group', script: null, snippetId: 4 },
    ]);
  });
});

describe('applyGroup', () => {
  it('returns the definition unchanged without a group', () => {
    const def = apiDefinition();
    expect(applyGroup(def, {}, undefined)).toBe(def);
  });
  it('takes the check runtime, else the group runtime', () => {
    const g = group({ runtimeId: '2025.04' });
    expect(applyGroup(apiDefinition(), {}, g).runtimeId).toBe('2025.04');
    expect(applyGroup(apiDefinition({ runtimeId: '2026.04' }), {}, g).runtimeId).toBe('2026.04');
    expect(applyGroup(apiDefinition(), {}, group()).runtimeId).toBeNull();
  });
  it('carries the group id, variables, scripts and the merged API request', () => {
    const g = group({
      apiCheckDefaults: defaults({ url: 'http://base.test/api', headers: [{ key: 'X-G', value: '1', locked: false }] }),
      environmentVariables: [{ key: 'TOKEN', value: 't', locked: false, secret: true }],
      localTearDownScript: 'cleanup()',
    });
    const merged = applyGroup(apiDefinition({ request: request({ url: '/status' }) }), {}, g) as ApiCheckDefinition;
    expect(merged.groupId).toBe(7);
    expect(merged.request.url).toBe('http://base.test/api/status');
    expect(merged.request.headers).toEqual([{ key: 'X-G', value: '1' }]);
    expect(merged.environmentVariables).toEqual([{ key: 'TOKEN', value: 't', secret: true }]);
    expect(merged.scripts).toEqual({ setup: [], tearDown: [{ from: 'group', script: 'cleanup()', snippetId: null }] });
  });
  it('leaves the request of other check types alone but still carries group settings', () => {
    const tcp = {
      id: 'c',
      accountId: 'a',
      name: 't',
      checkType: 'TCP',
      shouldFail: false,
      runtimeId: null,
      request: { hostname: 'h', port: 1 },
    };
    const merged = applyGroup(
      tcp as unknown as CheckDefinition,
      {},
      group({ runtimeId: '2024.09' }),
    ) as unknown as Record<string, unknown>;
    expect(merged.request).toEqual({ hostname: 'h', port: 1 });
    expect(merged.runtimeId).toBe('2024.09');
  });
});

describe('effectivePlacement', () => {
  const check = { activated: true, muted: false, locationIds: ['own'] };
  it("is the check's own without a group", () => {
    expect(effectivePlacement(check, undefined)).toEqual({ activated: true, muted: false, locationIds: ['own'] });
  });
  it("uses the group's private locations when it has any, else the check's", () => {
    expect(effectivePlacement(check, { activated: true, muted: false, locationIds: ['g1', 'g2'] }).locationIds).toEqual(
      ['g1', 'g2'],
    );
    expect(effectivePlacement(check, { activated: true, muted: false, locationIds: [] }).locationIds).toEqual(['own']);
  });
  it('runs nothing of a deactivated group, and either muting mutes', () => {
    expect(effectivePlacement(check, { activated: false, muted: false, locationIds: [] }).activated).toBe(false);
    expect(
      effectivePlacement({ ...check, activated: false }, { activated: true, muted: false, locationIds: [] }).activated,
    ).toBe(false);
    expect(effectivePlacement(check, { activated: true, muted: true, locationIds: [] }).muted).toBe(true);
  });
});
