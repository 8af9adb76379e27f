/**
 * Variables end to end: the real service and a real agent process, a real HTTP target on loopback.
 * Account, group and check variables of the same name reach the target with the reference's
 * precedence (check over group over account) through the service's merge and the agent's
 * substitution; a missing variable is sent as written and noted in the stored result; a secret
 * substituted into the URL is in no stored result.
 */
import type http from 'node:http';
import { describe, expect } from 'vitest';
import { stackTest } from '../support/e2e-test.ts';

const TOKEN = 'e2e-variables-secret-token';

const seen: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
const it = stackTest({
  name: 'e2e-variables',
  location: 'vars-agent',
  target: (req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    res.writeHead(200).end('ok');
  },
});

describe('variables end to end', () => {
  const hit = (prefix: string) => seen.find((s) => s.path.startsWith(prefix));

  it.beforeAll(async ({ api }) => {
    for (const v of [
      { key: 'LEVEL', value: 'account' },
      { key: 'ACCOUNT_ONLY', value: 'acct' },
      { key: 'TOKEN', value: TOKEN, secret: true },
    ]) {
      await api.ok('POST', '/v1/variables', v);
    }
  });

  it('resolves check over group over account, notes a missing variable and scrubs a secret', async ({
    api,
    target,
  }) => {
    const group = await api.ok<{ id: number }>('POST', '/v2/check-groups', {
      name: 'vars',
      privateLocations: ['vars-agent'],
      environmentVariables: [
        { key: 'LEVEL', value: 'group' },
        { key: 'GROUP_ONLY', value: 'grp' },
      ],
    });
    const url = (path: string) => `${target.url}${path}`;
    const own = await api.createApiCheck({
      name: 'own',
      frequency: 1440,
      groupId: group.id,
      environmentVariables: [{ key: 'LEVEL', value: 'check' }],
      request: {
        method: 'GET',
        url: url('/own/{{LEVEL}}/{{GROUP_ONLY}}/{{ACCOUNT_ONLY}}?t={{{TOKEN}}}'),
        headers: [{ key: 'X-Missing', value: '{{NOPE}}' }],
      },
    });
    const member = await api.createApiCheck({
      name: 'member',
      frequency: 1440,
      groupId: group.id,
      request: { method: 'GET', url: url('/member/{{LEVEL}}') },
    });
    const alone = await api.createApiCheck({
      name: 'alone',
      frequency: 1440,
      privateLocations: ['vars-agent'],
      request: { method: 'GET', url: url('/alone/{{LEVEL}}') },
    });

    const [ownResult] = await Promise.all([
      api.firstResult(own.id),
      api.firstResult(member.id),
      api.firstResult(alone.id),
    ]);
    expect(hit('/own/')?.path).toBe(`/own/check/grp/acct?t=${TOKEN}`);
    expect(hit('/own/')?.headers['x-missing']).toBe('{{NOPE}}');
    expect(hit('/member/')?.path).toBe('/member/group');
    expect(hit('/alone/')?.path).toBe('/alone/account');

    expect(ownResult).toMatchObject({
      hasFailures: false,
      details: {
        variableNotes: [
          { field: 'request.headers[0].value', reference: '{{NOPE}}', message: expect.stringMatching(/NOPE/) },
        ],
      },
    });
    expect(JSON.stringify(ownResult)).not.toContain(TOKEN);
    expect(JSON.stringify(ownResult)).toContain('t=[secret]');
  });
});
