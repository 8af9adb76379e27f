/**
 * Certificate expiry alerts: API results carrying the certificate the agent saw go through the
 * agent API and the dispatcher into a real SQLite store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredCheck } from '../../src/service/store/store.ts';
import type { ApiCheckResult, ApiTlsDetails } from '../../src/shared/checks/types.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { alertHistory, answerRun } from '../helpers/alert-history.ts';
import { type Harness, startHarness, type TestAgent, type TestTenant } from '../helpers/dispatch-harness.ts';

const HOUR = 3_600_000;
let h: Harness;
let tenant: TestTenant;
let agent: TestAgent;

beforeEach(async () => {
  h = await startHarness();
  h.clock.now = Date.parse('2026-11-23T08:00:00Z');
  tenant = await h.tenant();
  agent = await h.agent(tenant);
});

afterEach(async () => {
  await h.close();
});

/** An API result whose response came over https with a certificate `daysRemaining` days from expiry. */
function withCert(daysRemaining: number, fingerprint256: string, over: Partial<RunResult> = {}): Partial<RunResult> {
  const tls: ApiTlsDetails = {
    subjectCN: 'example.test',
    issuerCN: 'Test CA',
    validFrom: null,
    validTo: null,
    daysRemaining,
    fingerprint256,
  };
  const status = over.hasFailures ? 500 : 200;
  return {
    apiCheckResult: { requestError: null, response: { status, tls }, assertions: [] } as unknown as ApiCheckResult,
    ...over,
  };
}

const runOnce = (check: StoredCheck, result: Partial<RunResult>, who: TestAgent = agent) =>
  answerRun(h, who, check, result);
const alerts = (checkId: string) => alertHistory(h.store, tenant.accountId, checkId);

describe('SSL certificate expiry', () => {
  it('one ALERT_SSL per certificate per UTC day once 30 days or fewer are left; it never moves the state', async () => {
    const check = await h.check(tenant);
    await runOnce(check, withCert(31, 'AA:01'));
    expect(await alerts(check.id)).toEqual([]);
    await runOnce(check, withCert(30, 'AA:01'));
    const [ssl] = await alerts(check.id);
    expect(ssl).toMatchObject({ alertType: 'ALERT_SSL', sslDaysRemaining: 30, statusCode: '200' });
    const status = await h.store.checkStatuses.get(tenant.accountId, check.id);
    expect(status).toMatchObject({ hasFailures: false, sslDaysRemaining: 30, alert: { state: 'PASSING' } });

    // Later the same UTC day: the same certificate is not alerted again, another one is.
    h.clock.now += 10 * HOUR;
    await runOnce(check, withCert(30, 'AA:01'));
    await runOnce(check, withCert(12, 'BB:02'));
    expect((await alerts(check.id)).map((a) => a.sslDaysRemaining)).toEqual([30, 12]);
    // The next UTC day: again, once.
    h.clock.now += 6 * HOUR;
    await runOnce(check, withCert(29, 'AA:01'));
    await runOnce(check, withCert(29, 'AA:01'));
    expect((await alerts(check.id)).map((a) => `${a.alertType} ${a.sslDaysRemaining}`)).toEqual([
      'ALERT_SSL 30',
      'ALERT_SSL 12',
      'ALERT_SSL 29',
    ]);
  });

  it('a failing result raises its failure alert and the SSL alert together', async () => {
    const check = await h.check(tenant);
    await runOnce(check, withCert(3, 'AA:01', { hasFailures: true, error: 'status 500' }));
    const raised = await alerts(check.id);
    expect(raised.map((a) => a.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_SSL']);
    expect(raised[0]?.createdAt).toBe(raised[1]?.createdAt);
    expect(raised[0]?.sslDaysRemaining).toBeNull();
  });

  it('the results of one run at several locations seeing the same certificate raise one alert', async () => {
    const second = await h.store.locations.create(tenant.accountId, {
      name: 'Office B',
      slugName: 'office-b',
      icon: 'location',
      proxyUrl: null,
    });
    const { rawKey } = await h.store.locations.createKey(tenant.accountId, second.id);
    const agentB = await h.agent({ ...tenant, location: second, key: rawKey });
    const check = await h.check(tenant, { locationIds: [tenant.location.id, second.id] });
    await runOnce(check, withCert(7, 'AA:01'));
    await runOnce(check, withCert(7, 'AA:01'), agentB);
    expect((await alerts(check.id)).map((a) => a.alertType)).toEqual(['ALERT_SSL']);
  });

  it("an SSL monitor's leaf certificate feeds the same alert and the status's days remaining", async () => {
    const sslAgent = await h.agent(tenant, { checkTypes: ['SSL'] });
    const check = await h.check(tenant, {
      checkType: 'SSL',
      body: { name: 'Edge', request: { sslConfig: { hostname: 'edge.test' } } },
    });
    const sslCheckResult = (days: number) => ({
      requestError: null,
      response: { certificate: { daysUntilExpiry: days, fingerprintSha256: 'CC:03' } },
    });
    await runOnce(
      check,
      {
        checkType: 'SSL',
        isDegraded: true,
        details: { sslCheckResult: sslCheckResult(12) },
      } as unknown as Partial<RunResult>,
      sslAgent,
    );
    // Degraded (fewer than alertDaysBeforeExpiry left) raises its own alert beside the SSL one.
    expect((await alerts(check.id)).map((a) => `${a.alertType} ${a.sslDaysRemaining}`)).toEqual([
      'ALERT_DEGRADED null',
      'ALERT_SSL 12',
    ]);
    expect(await h.store.checkStatuses.get(tenant.accountId, check.id)).toMatchObject({ sslDaysRemaining: 12 });
  });

  it('an infrastructure error raises no alert of any kind', async () => {
    const check = await h.check(tenant);
    await runOnce(check, { hasErrors: true, error: 'the sandbox could not be started', ...withCert(2, 'AA:01') });
    expect(await alerts(check.id)).toEqual([]);
    expect((await h.store.checkStatuses.get(tenant.accountId, check.id))?.alert.state).toBe('PASSING');
  });
});
