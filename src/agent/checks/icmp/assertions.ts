/**
 * ICMP assertions, evaluated by the API checks' engine (api/assertions.ts) so that every comparison
 * means the same thing in every check type:
 *
 *  - LATENCY with `property` avg, min, max or stdDev compares that statistic (ms) of the run; with no
 *    reply at all the value is null (so LESS_THAN fails, IS_NULL passes).
 *  - JSON_RESPONSE takes a JSONPath in `property` over the result's `response` object
 *    (`$.packetLoss`, `$.latency.avg`, `$.pings[0].rtt`, `$.resolvedIp`...).
 */
import {
  type EvaluatedAssertion,
  ICMP_LATENCY_PROPERTIES,
  type IcmpAssertion,
  type IcmpCheckResult,
} from '../../../shared/checks/types.ts';
import { evaluateAssertions } from '../api/assertions.ts';

type Response = NonNullable<IcmpCheckResult['response']>;

export function evaluateIcmpAssertions(
  assertions: readonly IcmpAssertion[],
  response: Response,
): EvaluatedAssertion<IcmpAssertion>[] {
  const body = JSON.stringify(response);
  // The latency object with null members when nothing came back, so every statistic exists.
  const latencyBody = JSON.stringify(response.latency ?? { min: null, max: null, avg: null, stdDev: null });
  return (Array.isArray(assertions) ? assertions : []).map((a) => {
    const property = typeof a.property === 'string' ? a.property.trim() : '';
    const regex = typeof a.regex === 'string' && a.regex !== '' ? a.regex : null;
    const asJson = (path: string, doc: string): EvaluatedAssertion<IcmpAssertion> => {
      const [r] = evaluateAssertions(
        [{ source: 'JSON_BODY', comparison: a.comparison, property: path, target: a.target, regex }],
        { status: 0, headers: {}, body: doc, responseTime: 0 },
      );
      const out: EvaluatedAssertion<IcmpAssertion> = { ...a, actual: r!.actual, passed: r!.passed };
      if (r!.error) out.error = r!.error;
      return out;
    };
    if (a.source === 'LATENCY') {
      if (!(ICMP_LATENCY_PROPERTIES as readonly string[]).includes(property)) {
        return {
          ...a,
          actual: null,
          passed: false,
          error: `LATENCY needs property ${ICMP_LATENCY_PROPERTIES.join(', ')}; got "${property}"`,
        };
      }
      return asJson(`$.${property}`, latencyBody);
    }
    if (a.source === 'JSON_RESPONSE') return asJson(property, body);
    return {
      ...a,
      actual: null,
      passed: false,
      error: `unknown source "${String(a.source)}"; use LATENCY or JSON_RESPONSE`,
    };
  });
}
