/**
 * The SSL monitor's security baseline: rules over the negotiated session and the chain, each with a
 * severity (fail, degrade, ignore), giving a verdict (pass, warn, fail) and a grade (A-, B, F) as the
 * reference describes them. Evaluated here: minimum and recommended TLS version, minimum and
 * recommended RSA key size, weak signature algorithms, weak cipher suites. The reference's knownBadCA,
 * ocspMustStapleRespected and sctPresent are stored with the monitor but not evaluated.
 */
import type {
  SslBaselineRule,
  SslCertificateInfo,
  SslSecurityBaseline,
  TlsVersionName,
} from '../../../shared/checks/monitors.ts';

/** Signature algorithms the reference calls weak (MD2, MD5, SHA-1 and DSA-SHA1 based). */
const WEAK_SIGNATURE = /^(md2|md5|sha1)With|^dsaWithSHA1$|^ecdsa-with-SHA1$/i;

/** Cipher suites the usual baselines call weak: no encryption or authentication, export grade, RC4, (3)DES, MD5. */
const WEAK_CIPHER = /NULL|EXPORT|EXP-|anon|ADH|AECDH|RC4|DES|MD5/i;

/** `TLSv1.3` (Node's spelling) or `TLS1.3` as a number, 1.3; null when unknown. */
export function tlsVersionNumber(v: string | null | undefined): number | null {
  const m = /^TLS\s*v?(1\.[0-3])$/i.exec((v ?? '').trim());
  return m ? Number(m[1]) : null;
}

/** Node's `TLSv1.3` in the reference's spelling, `TLS1.3`. */
export function tlsVersionName(protocol: string | null): string | null {
  return protocol ? protocol.replace(/^TLSv/, 'TLS') : null;
}

function versionRule(
  rule: 'minTLSVersion' | 'recommendedTLSVersion',
  c: { value: TlsVersionName; severity: SslBaselineRule['severity'] },
  protocol: string | null,
): SslBaselineRule {
  const got = tlsVersionNumber(protocol);
  const passed = got !== null && got >= (tlsVersionNumber(c.value) ?? 0);
  return {
    rule,
    severity: c.severity,
    passed,
    detail: `negotiated ${tlsVersionName(protocol) ?? 'unknown'}, ${rule === 'minTLSVersion' ? 'minimum' : 'recommended'} ${c.value}`,
  };
}

function keyRule(
  rule: 'minKeySizeBits' | 'recommendedKeySizeBits',
  c: { value: number; severity: SslBaselineRule['severity'] },
  leaf: SslCertificateInfo,
): SslBaselineRule {
  // The rule is about RSA keys; an EC key of any usual size is stronger than the RSA minimums.
  const rsa = leaf.keyAlgorithm?.startsWith('RSA') === true;
  const passed = !rsa || (leaf.keySizeBits ?? 0) >= c.value;
  return {
    rule,
    severity: c.severity,
    passed,
    detail: `${leaf.keyAlgorithm ?? 'unknown'} ${leaf.keySizeBits ?? '?'} bits, ${rule === 'minKeySizeBits' ? 'minimum' : 'recommended'} ${c.value} (RSA)`,
  };
}

function signatureRule(
  c: { severity: SslBaselineRule['severity'] },
  chain: readonly SslCertificateInfo[],
): SslBaselineRule {
  // A root's own signature is not relied upon, so self-signed certificates up the chain do not count.
  const weak = chain.filter(
    (cert, i) => !(i > 0 && cert.selfSigned) && WEAK_SIGNATURE.test(cert.signatureAlgorithm ?? ''),
  );
  const detail =
    weak.length === 0
      ? 'no weak signature algorithm'
      : weak.map((w) => `${w.subjectCN ?? w.subject}: ${w.signatureAlgorithm}`).join('; ');
  return { rule: 'weakSignatureAlgorithm', severity: c.severity, passed: weak.length === 0, detail };
}

function cipherRule(c: { severity: SslBaselineRule['severity'] }, cipher: string | null): SslBaselineRule {
  const weak = cipher !== null && WEAK_CIPHER.test(cipher);
  return { rule: 'weakCipherSuite', severity: c.severity, passed: !weak, detail: `negotiated ${cipher ?? 'unknown'}` };
}

export interface BaselineOutcome {
  verdict: 'pass' | 'warn' | 'fail';
  grade: 'A-' | 'B' | 'F';
  rules: SslBaselineRule[];
}

export function evaluateBaseline(
  b: SslSecurityBaseline,
  session: { protocol: string | null; cipher: string | null },
  chain: readonly SslCertificateInfo[],
): BaselineOutcome {
  const protocol = session.protocol;
  const leaf = chain[0];
  if (!b.enabled || !leaf) return { verdict: 'pass', grade: 'A-', rules: [] };
  const rules = [
    versionRule('minTLSVersion', b.minTLSVersion, protocol),
    keyRule('minKeySizeBits', b.minKeySizeBits, leaf),
    signatureRule(b.weakSignatureAlgorithm, chain),
    cipherRule(b.weakCipherSuite, session.cipher),
    versionRule('recommendedTLSVersion', b.recommendedTLSVersion, protocol),
    keyRule('recommendedKeySizeBits', b.recommendedKeySizeBits, leaf),
  ];
  const broken = rules.filter((r) => !r.passed);
  if (broken.some((r) => r.severity === 'fail')) return { verdict: 'fail', grade: 'F', rules };
  if (broken.length > 0) return { verdict: 'warn', grade: 'B', rules };
  return { verdict: 'pass', grade: 'A-', rules };
}
