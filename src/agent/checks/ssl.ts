/**
 * The SSL monitor runner: resolve and connect (the API check's helpers in api/connect.ts, so
 * USE_OS_DNS_RESOLVER, family fallback and the words for failures are the same), complete a TLS
 * handshake with SNI, and report the certificate chain: expiry, issuer, days left, whether the chain
 * is trusted and the host name matches, the protocol and cipher; then the security baseline
 * (ssl/baseline.ts) and the monitor's assertions (ssl/assertions.ts).
 *
 * Why node:tls and not undici: undici speaks HTTP and only hands back a response; an SSL monitor needs
 * the handshake itself (the negotiated version and cipher, the peer's whole chain, its own timing) and
 * must work on ports that do not speak HTTP at all (SMTPS, LDAPS, a database's TLS port). A raw TLS
 * connect over the TCP socket is exactly that, and nothing more.
 *
 * An untrusted chain or a certificate for another host must not abort the check: the handshake runs
 * with verification off, and the runner judges the chain (OpenSSL's verify result, which Node keeps in
 * `authorizationError`) and the host name (tls.checkServerIdentity) itself, reporting both. The
 * connect and the handshake are shared with TCP checks over TLS (net/connect-tracked.ts,
 * net/tls-handshake.ts).
 */
import type net from 'node:net';
import type tls from 'node:tls';
import type { SslCheckDefinition, SslCheckResult, SslConfig } from '../../shared/checks/monitors.ts';
import type { ResolvedVia } from './api/connect.ts';
import { CANCELLED, describeRequestError, isTargetError, timeoutMessage, tlsErrorText } from './api/errors.ts';
import { newHop } from './api/timings.ts';
import { tlsOptionsOf } from './api/tls.ts';
import { connectTracked, newTrack } from './net/connect-tracked.ts';
import { startRunSignal } from './net/run-signal.ts';
import { peerTrust, tlsHandshake, tlsNameOf } from './net/tls-handshake.ts';
import { type Verdict, finishRun, roundMs } from './net/verdict.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';
import { evaluateSslAssertions } from './ssl/assertions.ts';
import { evaluateBaseline, tlsVersionName } from './ssl/baseline.ts';
import { describeChain } from './ssl/certificate.ts';

type Response = NonNullable<SslCheckResult['response']>;

/** The name sent in SNI and checked against the certificate: serverName, else the hostname. */
const nameOf = (cfg: SslConfig): string => tlsNameOf(cfg.hostname, cfg.serverName);

/** What the handshake showed, before any judgement. */
function inspect(socket: tls.TLSSocket, name: string, address: string, handshakeTimeMs: number): Response {
  const chain = describeChain(socket);
  return {
    resolvedIp: address,
    protocol: tlsVersionName(socket.getProtocol()),
    cipherSuite: socket.getCipher()?.standardName ?? socket.getCipher()?.name ?? null,
    handshakeTimeMs: roundMs(handshakeTimeMs),
    ...peerTrust(socket, name),
    daysUntilExpiry: chain[0]?.daysUntilExpiry ?? null,
    securityBaseline: null,
    certificate: chain[0] ?? null,
    chain,
  };
}

/** The certificate's own failure (expired, wrong host, untrusted chain), or null. Expiry first: it says most. */
function certificateProblem(r: Response, cfg: SslConfig, name: string): { category: string; message: string } | null {
  const leaf = r.certificate;
  if (!leaf) return { category: 'handshake', message: 'The server presented no certificate' };
  if (r.daysUntilExpiry !== null && r.daysUntilExpiry < 0) {
    return {
      category: 'expired',
      message: `Certificate expired at ${leaf.validTo} (daysUntilExpiry ${r.daysUntilExpiry})`,
    };
  }
  if (!r.hostnameVerified)
    return { category: 'hostname', message: `Certificate does not match the host name "${name}": ${r.hostnameDetail}` };
  if (!r.chainTrusted && !cfg.skipChainValidation) {
    const code = r.chainTrustReason ?? 'UNKNOWN';
    return { category: 'chain', message: `Certificate chain is not trusted: ${tlsErrorText(code)} (${code})` };
  }
  return null;
}

interface Attempt {
  response: Response | null;
  requestError: string | null;
  category: string | null;
  resolvedVia: ResolvedVia | null;
  elapsedMs: number;
}

/** Connects and shakes hands; every failure of the target becomes requestError with its category. */
async function attempt(check: SslCheckDefinition, ctx: CheckContext): Promise<Attempt> {
  const cfg = check.request.sslConfig;
  const t0 = performance.now();
  const run = startRunSignal(ctx, t0);
  const hop = newHop(t0);
  const track = newTrack();
  let raw: net.Socket | null = null;
  let socket: tls.TLSSocket | null = null;
  const out: Attempt = { response: null, requestError: null, category: null, resolvedVia: null, elapsedMs: 0 };
  try {
    const { hostname, port, ipFamily } = cfg;
    raw = await connectTracked({
      hostname,
      port,
      ipFamily,
      useOsDnsResolver: ctx.useOsDnsResolver,
      signal: run.signal,
      hop,
      track,
    });
    track.phase = 'tls';
    const tlsStart = performance.now();
    socket = await tlsHandshake(raw, nameOf(cfg), run.signal, cfg.handshakeTimeoutMs, tlsOptionsOf(check.tls));
    out.response = inspect(socket, nameOf(cfg), track.address?.address ?? '', performance.now() - tlsStart);
  } catch (err) {
    if (run.abortKind === null && !isTargetError(err)) throw err;
    if (run.abortKind !== null) {
      out.requestError = run.abortKind === 'timeout' ? timeoutMessage(ctx.timeoutMs, track.phase) : CANCELLED;
      out.category = run.abortKind;
    } else {
      const host = cfg.hostname;
      const { phase } = track;
      out.requestError = describeRequestError(err, {
        host,
        port: cfg.port,
        address: track.address?.address ?? null,
        phase,
      });
      out.category =
        (err as { code?: string }).code === 'HANDSHAKE_TIMEOUT' ? 'timeout' : phase === 'tls' ? 'handshake' : phase;
    }
  } finally {
    socket?.destroy();
    raw?.destroy();
    run.dispose();
  }
  out.resolvedVia = track.resolvedVia;
  out.elapsedMs = performance.now() - t0;
  return out;
}

async function runSslCheck(check: SslCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
  const startedAt = new Date();
  const cfg = check.request.sslConfig;
  const a = await attempt(check, ctx);
  const r = a.response;
  const problem = r ? certificateProblem(r, cfg, nameOf(cfg)) : null;
  // The baseline judges a certificate that is otherwise fine (the reference skips it after a failure).
  if (r && !problem)
    r.securityBaseline = evaluateBaseline(
      cfg.securityBaseline,
      { protocol: r.protocol, cipher: r.cipherSuite },
      r.chain,
    );
  const baseline = r?.securityBaseline ?? null;
  const baselineFailure =
    baseline?.verdict === 'fail' ? `Security baseline failed: ${brokenRules(baseline, 'fail')}` : null;
  const assertions = r ? evaluateSslAssertions(check.request.assertions, r) : [];
  const responseTime = r ? r.handshakeTimeMs : roundMs(a.elapsedMs);
  // Degraded also when expiry is near (alertDaysBeforeExpiry) or a degrade-severity rule is broken.
  const expirySoon =
    r?.daysUntilExpiry != null && r.daysUntilExpiry >= 0 && r.daysUntilExpiry < cfg.alertDaysBeforeExpiry;
  const baselineDegraded = baseline?.rules.some((x) => !x.passed && x.severity === 'degrade') === true;
  const sslCheckResult = (verdict: Verdict): SslCheckResult => ({
    tlsVersion: r?.protocol ?? null,
    cipherSuite: r?.cipherSuite ?? null,
    daysUntilExpiry: r?.daysUntilExpiry ?? null,
    handshakeTimeMs: r?.handshakeTimeMs ?? null,
    chainTrusted: r?.chainTrusted ?? null,
    hostnameVerified: r?.hostnameVerified ?? null,
    baselineVerdict: baseline?.verdict ?? null,
    baselineGrade: baseline?.grade ?? null,
    failureCategory: failureCategory(verdict, a, problem, baselineFailure),
    requestError: a.requestError,
    request: { hostname: cfg.hostname, port: cfg.port, serverName: cfg.serverName, ipFamily: cfg.ipFamily },
    assertions,
    response: r,
  });
  return finishRun({
    check,
    ctx,
    label: 'ssl',
    startedAt,
    stoppedAt: new Date(),
    measured: {
      requestError: a.requestError,
      errorAnswer: problem?.message ?? baselineFailure,
      answered: r !== null,
      assertions,
      responseTime,
      shouldFailExcuses: 'errorAnswer',
      degradedAnyway: expirySoon || baselineDegraded,
    },
    details: (verdict) => ({ sslCheckResult: sslCheckResult(verdict), resolvedVia: a.resolvedVia }),
  });
}

function brokenRules(b: NonNullable<Response['securityBaseline']>, severity: string): string {
  return b.rules
    .filter((x) => !x.passed && x.severity === severity)
    .map((x) => `${x.rule} (${x.detail})`)
    .join('; ');
}

/** The stage the run failed at (dns, connect, timeout, handshake, expired, hostname, chain, baseline), else null. */
function failureCategory(
  verdict: { hasFailures: boolean; overMaxResponseTime: boolean },
  a: Attempt,
  problem: { category: string } | null,
  baselineFailure: string | null,
): string | null {
  if (!verdict.hasFailures) return null;
  const own = a.category ?? problem?.category ?? (baselineFailure ? 'baseline' : null);
  return own ?? (verdict.overMaxResponseTime ? 'responseTime' : 'assertion');
}

/** Runs SSL monitors (TLS handshake, certificate chain, baseline, assertions); registered in ./index.ts. */
export const sslCheckRunner: CheckRunner<SslCheckDefinition> = {
  checkType: 'SSL',
  run: runSslCheck,
};
