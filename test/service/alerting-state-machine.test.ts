import { describe, expect, it } from 'vitest';
import { effectiveAlertSettings, resolveAlertSettings } from '../../src/service/alerting/alert-settings.ts';
import {
  type AlertState,
  type CountedResult,
  INITIAL_STATE,
  nextReminderAtMs,
  step,
  type TransitionAlertType,
} from '../../src/service/alerting/state-machine.ts';

const MIN = 60_000;
const T0 = Date.parse('2026-11-23T10:00:00Z');

/** A FINAL result at location `loc` of the run due at minute `minute`. */
function result(
  minute: number,
  outcome: 'pass' | 'fail' | 'degraded',
  over: Partial<CountedResult> = {},
): CountedResult {
  return {
    resultType: 'FINAL',
    locationId: 'loc-a',
    runKey: new Date(T0 + minute * MIN).toISOString(),
    hasFailures: outcome === 'fail',
    hasErrors: false,
    isDegraded: outcome === 'degraded',
    isCancelled: false,
    atMs: T0 + minute * MIN,
    ...over,
  };
}

/** Feeds results in order; returns the final state and every alert raised. */
function run(results: CountedResult[], settings = resolveAlertSettings(null), locations = ['loc-a']) {
  let state: AlertState = INITIAL_STATE;
  const alerts: TransitionAlertType[] = [];
  for (const r of results) {
    const s = step(state, r, settings, locations);
    state = s.next;
    if (s.alert) alerts.push(s.alert);
  }
  return { state, alerts };
}

describe('alert state machine', () => {
  it('RUN_BASED: alerts once when the consecutive failed runs reach failedRunThreshold, then once on recovery', () => {
    const settings = resolveAlertSettings({
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 3 },
    });
    const two = run([result(0, 'fail'), result(1, 'fail')], settings);
    expect(two.alerts).toEqual([]);
    expect(two.state).toMatchObject({ state: 'PASSING', consecutiveFailedRuns: 2 });
    const all = run(
      [result(0, 'fail'), result(1, 'fail'), result(2, 'fail'), result(3, 'fail'), result(4, 'pass')],
      settings,
    );
    expect(all.alerts).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
    expect(all.state).toMatchObject({
      state: 'PASSING',
      consecutiveFailedRuns: 0,
      failingSinceMs: null,
      alertedAtMs: null,
    });
  });

  it('RUN_BASED: a passing run in between resets the count', () => {
    const settings = resolveAlertSettings({
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 2 },
    });
    expect(run([result(0, 'fail'), result(1, 'pass'), result(2, 'fail')], settings).alerts).toEqual([]);
  });

  it('TIME_BASED: alerts only once the check has failed for minutesFailingThreshold (injected clock)', () => {
    const settings = resolveAlertSettings({
      escalationType: 'TIME_BASED',
      timeBasedEscalation: { minutesFailingThreshold: 10 },
    });
    const early = run(
      [0, 3, 6, 9].map((m) => result(m, 'fail')),
      settings,
    );
    expect(early.alerts).toEqual([]);
    const late = run(
      [0, 3, 6, 9, 10, 11].map((m) => result(m, 'fail')),
      settings,
    );
    expect(late.alerts).toEqual(['ALERT_FAILURE']);
  });

  it('degraded, degraded recovery, degraded to failure and failure to degraded', () => {
    expect(run([result(0, 'degraded'), result(1, 'degraded'), result(2, 'pass')]).alerts).toEqual([
      'ALERT_DEGRADED',
      'ALERT_DEGRADED_RECOVERY',
    ]);
    expect(run([result(0, 'degraded'), result(1, 'fail'), result(2, 'degraded')]).alerts).toEqual([
      'ALERT_DEGRADED',
      'ALERT_DEGRADED_FAILURE',
      'ALERT_FAILURE_DEGRADED',
    ]);
  });

  it('ignores ATTEMPT results, cancelled runs and infrastructure errors', () => {
    const ignored = [
      result(0, 'fail', { resultType: 'ATTEMPT' }),
      result(1, 'fail', { isCancelled: true }),
      result(2, 'pass', { hasErrors: true }),
    ];
    const out = run(ignored);
    expect(out.alerts).toEqual([]);
    expect(out.state).toBe(INITIAL_STATE);
    // An infrastructure error while failing does not recover the check either.
    expect(run([result(0, 'fail'), result(1, 'pass', { hasErrors: true })]).state.state).toBe('FAILING');
    // A check error that also failed the check (hasFailures) counts.
    expect(run([result(0, 'fail', { hasErrors: true })]).alerts).toEqual(['ALERT_FAILURE']);
  });

  it('several locations: one alert per transition, and one run counts once across its locations', () => {
    const locations = ['loc-a', 'loc-b', 'loc-c'];
    const settings = resolveAlertSettings({ runBasedEscalation: { failedRunThreshold: 2 } });
    const at = (m: number, loc: string, o: 'pass' | 'fail') => result(m, o, { locationId: loc });
    const first = run([at(0, 'loc-a', 'fail'), at(0, 'loc-b', 'fail'), at(0, 'loc-c', 'fail')], settings, locations);
    expect(first.alerts).toEqual([]);
    expect(first.state.consecutiveFailedRuns).toBe(1);
    const both = run(
      [
        ...['loc-a', 'loc-b', 'loc-c'].flatMap((l) => [at(0, l, 'fail')]),
        ...['loc-a', 'loc-b', 'loc-c'].map((l) => at(1, l, 'fail')),
      ],
      settings,
      locations,
    );
    expect(both.alerts).toEqual(['ALERT_FAILURE']);
    // Recovery waits for every location to pass again.
    const recovering = [at(2, 'loc-a', 'pass'), at(2, 'loc-b', 'pass')];
    expect(
      run(
        [...['loc-a', 'loc-b', 'loc-c'].flatMap((l) => [at(0, l, 'fail'), at(1, l, 'fail')]), ...recovering],
        settings,
        locations,
      ).state.state,
    ).toBe('FAILING');
  });

  it('parallelRunFailureThreshold: fails only when that percentage of the locations fails', () => {
    const locations = ['loc-a', 'loc-b', 'loc-c', 'loc-d'];
    const settings = resolveAlertSettings({ parallelRunFailureThreshold: { enabled: true, percentage: 50 } });
    const at = (loc: string, o: 'pass' | 'fail') => result(0, o, { locationId: loc });
    expect(run([at('loc-a', 'fail'), at('loc-b', 'pass'), at('loc-c', 'pass')], settings, locations).alerts).toEqual(
      [],
    );
    expect(run([at('loc-a', 'fail'), at('loc-b', 'fail')], settings, locations).alerts).toEqual(['ALERT_FAILURE']);
    // Without the threshold one failing location of four fails the check.
    expect(run([at('loc-a', 'fail')], resolveAlertSettings(null), locations).alerts).toEqual(['ALERT_FAILURE']);
  });

  it('records what reminders need: the alert time, and the next reminder due from amount and interval', () => {
    const settings = resolveAlertSettings({ reminders: { amount: 2, interval: 10 } });
    const failing = run([result(0, 'fail'), result(1, 'fail')], settings).state;
    expect(failing.alertedAtMs).toBe(T0);
    expect(nextReminderAtMs(failing, settings)).toBe(T0 + 10 * MIN);
    expect(nextReminderAtMs({ ...failing, remindersSent: 1 }, settings)).toBe(T0 + 20 * MIN);
    expect(nextReminderAtMs({ ...failing, remindersSent: 2 }, settings)).toBeNull();
    expect(nextReminderAtMs(run([result(0, 'fail'), result(1, 'pass')], settings).state, settings)).toBeNull();
  });

  it("alert settings: the check's own only with useGlobalAlertSettings false; a group's own win over its check's; a group deferring to the account gives the defaults", () => {
    const own = { runBasedEscalation: { failedRunThreshold: 4 } };
    const check = { body: { alertSettings: own, useGlobalAlertSettings: false } };
    const group = {
      body: { alertSettings: { runBasedEscalation: { failedRunThreshold: 2 } }, useGlobalAlertSettings: false },
    };
    expect(effectiveAlertSettings(check, undefined).failedRunThreshold).toBe(4);
    // The reference's default (useGlobalAlertSettings true, or absent) is the account's settings.
    expect(
      effectiveAlertSettings({ body: { alertSettings: own, useGlobalAlertSettings: true } }, undefined)
        .failedRunThreshold,
    ).toBe(1);
    expect(effectiveAlertSettings({ body: { alertSettings: own } }, undefined).failedRunThreshold).toBe(1);
    expect(effectiveAlertSettings(check, group as never).failedRunThreshold).toBe(2);
    expect(
      effectiveAlertSettings(check, { body: { ...group.body, useGlobalAlertSettings: true } } as never)
        .failedRunThreshold,
    ).toBe(1);
    expect(
      effectiveAlertSettings(check, { body: { alertSettings: null, useGlobalAlertSettings: null } } as never)
        .failedRunThreshold,
    ).toBe(4);
    expect(effectiveAlertSettings({ body: {} }, undefined)).toMatchObject({
      escalationType: 'RUN_BASED',
      failedRunThreshold: 1,
      parallelFailurePercentage: null,
    });
  });
});
