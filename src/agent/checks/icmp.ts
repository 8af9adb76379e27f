/**
 * The ICMP check runner: `pingCount` echo requests to the check's host, with packet loss and latency
 * statistics, assertions (LATENCY, JSON_RESPONSE) and packet-loss thresholds.
 *
 * The echo requests are sent by the persistent ICMP helper when ICMP_HELPER_PATH names it
 * (icmp/helper/, the Docker images' choice), else by Debian's fping, many checks per process
 * (icmp/fping.ts); either way the agent needs neither root nor a process per check; what the image
 * must grant is in docs/checks.md. When this agent cannot ping at all (no binary, no socket) every
 * ICMP run is a failed result that says what is missing; nothing throws.
 *
 * Verdict: packet loss at or above `maxPacketLossThreshold` fails the run, at or above
 * `degradedPacketLossThreshold` degrades it; a failed assertion fails it. `responseTime` is the
 * average round-trip time (0 when nothing came back), which `degradedResponseTime` and
 * `maxResponseTime` are compared with.
 */
import {
  ICMP_PING_COUNT,
  type IcmpAssertion,
  type EvaluatedAssertion,
  type IcmpCheckDefinition,
  type IcmpCheckResult,
  type IpFamily,
} from '../../shared/checks/types.ts';
import { resolveHost } from './api/connect.ts';
import { describeFailedAssertion } from './api/assertions.ts';
import { evaluateIcmpAssertions } from './icmp/assertions.ts';
import { FpingBatcher } from './icmp/fping.ts';
import { IcmpHelper } from './icmp/helper/client.ts';
import { type Family, IcmpHelperStoppedError, IcmpUnavailableError, type Pinger } from './icmp/pinger.ts';
import { pickRoutable } from './icmp/route.ts';
import { raceAbort, startRunSignal } from './net/run-signal.ts';
import { noRouteMessage } from './net/unreachable.ts';
import { latencyStats, packetLoss } from './icmp/stats.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';
import type { IcmpRunDetails } from '../../shared/protocol.ts';

const familyName = (f: Family): IpFamily => (f === 6 ? 'IPv6' : 'IPv4');

/** The loopback echo that proves this agent can receive ICMP replies (see probeIcmp). */
const PROBE_RETRY_MS = 60_000;

interface ProbeState {
  ok: boolean;
  reason: string | null;
  at: number;
  pending: Promise<void> | null;
}

/**
 * Debian 12's fping 5.1, without cap_net_raw, falls back to an ICMP datagram socket but discards
 * the replies (it checks the ICMP id the kernel rewrote), so a missing capability would look like
 * 100 % loss on every target; a firewall dropping replies would do the same to the helper. One echo
 * to 127.0.0.1, which always answers, tells the two apart; a success is kept, a failure is asked
 * again after a minute.
 */
async function probe(batcher: Pinger, state: ProbeState, signal: AbortSignal): Promise<string | null> {
  if (state.ok) return null;
  if (state.reason !== null && performance.now() - state.at < PROBE_RETRY_MS) return state.reason;
  state.pending ??= (async () => {
    try {
      const [rtt] = await batcher.ping({ address: '127.0.0.1', family: 4, count: 1 });
      state.ok = rtt !== null && rtt !== undefined;
      state.reason = state.ok
        ? null
        : `ICMP is not available on this agent: ${batcher.label} got no echo reply from 127.0.0.1 (loopback), so it cannot receive replies here; ` +
          'it needs the cap_net_raw file capability and NET_RAW in the container capability set';
      state.at = performance.now();
    } catch (err) {
      state.ok = false;
      state.reason =
        err instanceof IcmpUnavailableError ? err.message : `ICMP is not available on this agent: ${String(err)}`;
      // A helper that died under the probe says nothing lasting: this run fails, the next asks again.
      state.at = err instanceof IcmpHelperStoppedError ? Number.NEGATIVE_INFINITY : performance.now();
    } finally {
      state.pending = null;
    }
  })();
  await raceAbort(state.pending, signal);
  return state.reason;
}

const DNS_WORDS: Record<string, string> = {
  ENOTFOUND: 'the name does not exist',
  ENODATA: 'no address records',
  EAI_AGAIN: 'the DNS server did not answer in time',
  ETIMEOUT: 'the DNS server did not answer in time',
  ESERVFAIL: 'the DNS server failed',
  EREFUSED: 'the DNS server refused the query',
};

export interface IcmpRunnerOptions {
  /** What sends echo requests; one per agent (tests pass their own to count spawns). */
  batcher?: Pinger;
}

/** The helper when ICMP_HELPER_PATH names it, else fping batches (FPING_PATH, default `fping`). */
export function defaultPinger(env: NodeJS.ProcessEnv = process.env): Pinger {
  const helper = env.ICMP_HELPER_PATH;
  if (helper !== undefined && helper !== '') return new IcmpHelper({ path: helper });
  return new FpingBatcher({ binary: env.FPING_PATH || 'fping' });
}

/** Builds an ICMP runner around one pinger; the agent uses `icmpCheckRunner` below. */
export function createIcmpCheckRunner(
  options: IcmpRunnerOptions = {},
): CheckRunner<IcmpCheckDefinition> & { batcher: Pinger } {
  const batcher = options.batcher ?? defaultPinger();
  const probeState: ProbeState = { ok: false, reason: null, at: 0, pending: null };

  async function run(check: IcmpCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const req = check.request;
    const hostname = typeof req.hostname === 'string' ? req.hostname.trim() : '';
    const pingCount = req.pingCount ?? ICMP_PING_COUNT.default;
    const prefer: Family = req.ipFamily === 'IPv6' ? 6 : 4;

    // A run has its own time limit even if the caller does not enforce one.
    const run = startRunSignal(ctx);

    const result: IcmpCheckResult = {
      request: { hostname, ipFamily: familyName(prefer), pingCount },
      response: null,
      assertions: [],
      requestError: null,
    };
    const details: IcmpDetailsSoFar = {};
    try {
      if (hostname === '') throw new RunFailure('The check has no hostname to ping');
      if (!Number.isInteger(pingCount) || pingCount < ICMP_PING_COUNT.min || pingCount > ICMP_PING_COUNT.max) {
        throw new RunFailure(
          `pingCount must be a whole number from ${ICMP_PING_COUNT.min} to ${ICMP_PING_COUNT.max}; got ${String(pingCount)}`,
        );
      }
      const unavailable = await probe(batcher, probeState, run.signal);
      if (unavailable) throw new IcmpUnavailableError(unavailable);

      let resolved: Awaited<ReturnType<typeof resolveHost>>;
      try {
        resolved = await resolveHost(hostname, prefer, ctx.useOsDnsResolver, run.signal);
      } catch (err) {
        if (run.signal.aborted) throw err;
        const code = (err as NodeJS.ErrnoException).code ?? 'ERROR';
        throw new RunFailure(`DNS failure: could not resolve ${hostname} (${DNS_WORDS[code] ?? code}, ${code})`);
      }
      details.resolvedVia = resolved.via;
      const picked = await pickRoutable(resolved.addresses);
      if (picked.skipped.length > 0) {
        details.skippedAddresses = picked.skipped.map((s) => ({
          address: s.address,
          family: familyName(s.family),
          code: s.code,
        }));
      }
      if (!picked.chosen) {
        throw new RunFailure(
          noRouteMessage(
            hostname,
            picked.skipped.map((s) => ({ where: s.address, code: s.code })),
          ),
        );
      }
      const { address, family } = picked.chosen;
      const rtts = await batcher.ping({ address, family, count: pingCount, signal: run.signal });
      const latency = latencyStats(rtts);
      result.response = {
        resolvedIp: address,
        family: familyName(family),
        packetsSent: rtts.length,
        packetsReceived: rtts.filter((r) => r !== null).length,
        packetLoss: packetLoss(rtts),
        latency,
        pings: rtts.map((rtt, sequence) => ({ sequence, rtt })),
      };
      result.assertions = evaluateIcmpAssertions(req.assertions ?? [], result.response);
    } catch (err) {
      if (err instanceof RunFailure || err instanceof IcmpUnavailableError) result.requestError = err.message;
      else if (!run.signal.aborted) throw err;
      // The agent, not the target, is what failed: shouldFail must not turn that into a pass.
      if (err instanceof IcmpUnavailableError) details.icmpUnavailable = true;
    } finally {
      run.dispose();
    }
    if (run.abortKind !== null && result.response === null) {
      result.requestError =
        run.abortKind === 'timeout' ? `Timed out after ${ctx.timeoutMs} ms while pinging ${hostname}` : 'cancelled';
    }
    const stoppedAt = new Date();
    details.durationMs = Math.round((performance.now() - t0) * 1000) / 1000;
    return verdict(check, result, details, startedAt, stoppedAt);
  }

  return { checkType: 'ICMP', run, batcher };
}

/** A run that ends before (or instead of) pinging, with words for the result. */
class RunFailure extends Error {}

/** The run's details until the result is complete. */
type IcmpDetailsSoFar = Omit<IcmpRunDetails, 'icmpCheckResult'>;

function verdict(
  check: IcmpCheckDefinition,
  result: IcmpCheckResult,
  details: IcmpDetailsSoFar,
  startedAt: Date,
  stoppedAt: Date,
): CheckOutcome {
  const res = result.response;
  const responseTime = res?.latency?.avg ?? 0;
  const loss = res?.packetLoss ?? 100;
  const maxLoss = check.maxPacketLossThreshold;
  const degradedLoss = check.degradedPacketLossThreshold;
  const overMaxLoss = res !== null && maxLoss > 0 && loss >= maxLoss;
  const overMaxResponseTime = res !== null && check.maxResponseTime > 0 && responseTime > check.maxResponseTime;
  const failedAssertion = result.assertions.find((a: EvaluatedAssertion<IcmpAssertion>) => !a.passed);
  const reason =
    result.requestError ??
    (overMaxLoss
      ? `Packet loss ${loss}% to ${res.resolvedIp} is at or above the maximum of ${maxLoss}% (${res.packetsReceived} of ${res.packetsSent} replies)`
      : null) ??
    (failedAssertion ? describeFailedAssertion(failedAssertion) : null) ??
    (overMaxResponseTime
      ? `Average latency ${responseTime} ms is over the maximum of ${check.maxResponseTime} ms`
      : null);
  const isDegraded =
    reason === null &&
    res !== null &&
    ((degradedLoss > 0 && loss >= degradedLoss) ||
      (check.degradedResponseTime > 0 && responseTime > check.degradedResponseTime));

  const cancelled = result.requestError === 'cancelled';
  let hasFailures = reason !== null;
  let error = reason;
  if (check.shouldFail === true && !cancelled && details.icmpUnavailable !== true) {
    hasFailures = !hasFailures;
    error = hasFailures ? 'The check is expected to fail (shouldFail), but it passed' : null;
    details.shouldFail = { inverted: true, reason };
  }
  return {
    startedAt: startedAt.toISOString(),
    stoppedAt: stoppedAt.toISOString(),
    responseTime,
    hasFailures,
    hasErrors: false,
    isDegraded: isDegraded && !hasFailures,
    overMaxResponseTime,
    error,
    apiCheckResult: null,
    details: { ...details, icmpCheckResult: result },
  };
}

/** The agent's ICMP runner; registered in ./index.ts. */
export const icmpCheckRunner = createIcmpCheckRunner();
