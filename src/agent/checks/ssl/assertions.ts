/**
 * SSL monitor assertions on the shared engine (../api/assertions.ts): CERTIFICATE reads a field of
 * the leaf certificate, CONNECTION one of the handshake, RESPONSE_TIME the handshake time,
 * JSON_RESPONSE a JSONPath and TEXT_RESPONSE a regex over the result's `response` document.
 * tlsVersion compares in order (TLS1.0 < TLS1.1 < TLS1.2 < TLS1.3) with GREATER_THAN and LESS_THAN.
 */
import type { SslAssertion, SslCheckResult } from '../../../shared/checks/monitors.ts';
import type { EvaluatedAssertion } from '../../../shared/checks/types.ts';
import { AssertionError, evaluateAssertionsBy, selectJson, selectText } from '../api/assertions.ts';
import { tlsVersionNumber } from './baseline.ts';

type Response = NonNullable<SslCheckResult['response']>;

function certificateField(r: Response, property: string): unknown {
  const leaf = r.certificate;
  if (!leaf) throw new AssertionError('the server presented no certificate');
  if (property === 'issuerFingerprintSha256') return r.chain[1]?.fingerprintSha256 ?? null;
  if (!Object.hasOwn(leaf, property)) throw new AssertionError(`unknown CERTIFICATE property "${property}"`);
  return leaf[property as keyof typeof leaf];
}

function connectionField(r: Response, property: string): unknown {
  switch (property) {
    case 'tlsVersion':
      return r.protocol;
    case 'cipherSuite':
      return r.cipherSuite;
    case 'hostnameVerified':
      return r.hostnameVerified;
    case 'chainTrusted':
      return r.chainTrusted;
    case 'resolvedIp':
      return r.resolvedIp;
    default:
      throw new AssertionError(`unknown CONNECTION property "${property}"`);
  }
}

function actualOf(a: SslAssertion, r: Response): unknown {
  const property = (a.property ?? '').trim();
  switch (a.source) {
    case 'CERTIFICATE':
      return certificateField(r, property);
    case 'CONNECTION':
      return connectionField(r, property);
    case 'RESPONSE_TIME':
      return r.handshakeTimeMs;
    case 'JSON_RESPONSE':
      return selectJson(r, property);
    case 'TEXT_RESPONSE':
      return selectText(JSON.stringify(r), a.property);
    default:
      throw new AssertionError(`unknown source "${String(a.source)}"`);
  }
}

const isOrderedTlsVersion = (a: SslAssertion) =>
  a.source === 'CONNECTION' &&
  (a.property ?? '').trim() === 'tlsVersion' &&
  (a.comparison === 'GREATER_THAN' || a.comparison === 'LESS_THAN');

/** One result per assertion, in order; never throws. */
export function evaluateSslAssertions(
  assertions: readonly SslAssertion[],
  r: Response,
): EvaluatedAssertion<SslAssertion>[] {
  return assertions.map((a) => {
    if (!isOrderedTlsVersion(a))
      return evaluateAssertionsBy([a], (x) => actualOf(x, r))[0] as EvaluatedAssertion<SslAssertion>;
    // Versions compare as numbers (1.2 < 1.3); the result keeps the assertion as written.
    const asNumbers = { ...a, target: String(tlsVersionNumber(a.target) ?? a.target) };
    const [evaluated] = evaluateAssertionsBy([asNumbers], () => tlsVersionNumber(r.protocol));
    return { ...(evaluated as EvaluatedAssertion<SslAssertion>), target: a.target, actual: r.protocol };
  });
}
