/** Packet loss and latency statistics of one ICMP run, from its per-echo round-trip times. */

export interface LatencyStats {
  min: number;
  max: number;
  avg: number;
  stdDev: number;
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Population standard deviation, as ping's `mdev` and fping report it. Null when no reply came. */
export function latencyStats(rtts: ReadonlyArray<number | null>): LatencyStats | null {
  const got = rtts.filter((r): r is number => r !== null);
  if (got.length === 0) return null;
  const avg = got.reduce((a, b) => a + b, 0) / got.length;
  const variance = got.reduce((a, r) => a + (r - avg) ** 2, 0) / got.length;
  return {
    min: round3(Math.min(...got)),
    max: round3(Math.max(...got)),
    avg: round3(avg),
    stdDev: round3(Math.sqrt(variance)),
  };
}

/** Percent of echo requests without a reply, to two decimals. */
export function packetLoss(rtts: ReadonlyArray<number | null>): number {
  if (rtts.length === 0) return 100;
  const lost = rtts.filter((r) => r === null).length;
  return Math.round((lost / rtts.length) * 10000) / 100;
}
