/**
 * Secret scrubbing throughput: 100 secrets (each in all its forms: ./src/agent/scrub/forms.ts) over
 * 50 MB of mixed text (JSON, HTML, URLs, log lines, base64 blobs), generated from a fixed seed so
 * every run scrubs the same bytes. About one secret form is planted per 20 KB; every planted one
 * must be gone afterwards, or the run fails.
 *
 *   npm run bench -- scrub [--mb 50] [--secrets 100] [--rounds 3]
 *
 * Prints MB/s (best of the rounds, text already in memory) and the time to build the matcher.
 */
import { formsOf } from '../../src/agent/scrub/forms.ts';
import { Scrubber } from '../../src/agent/scrub/scrubber.ts';
import { numberFlags } from './_stats.ts';

/** mulberry32: a tiny seeded PRNG, so the text is the same on every machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  'the quick brown fox jumps over lazy dog status ok error request response token session user id value header body json html'.split(
    ' ',
  );
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function makeSecrets(n: number, rand: () => number): string[] {
  const specials = ' /+&<>"\'=?%é';
  return Array.from({ length: n }, (_, i) => {
    let s = `sk_${i}_`;
    const len = 12 + Math.floor(rand() * 28);
    for (let j = 0; j < len; j++)
      s += rand() < 0.1 ? specials[Math.floor(rand() * specials.length)] : ALNUM[Math.floor(rand() * ALNUM.length)];
    return s;
  });
}

/** ~`bytes` of mixed text with forms of the secrets planted; returns the text and what was planted. */
export function makeText(bytes: number, secrets: string[], rand: () => number): { text: string; planted: string[] } {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)] as T;
  const word = () => pick(WORDS);
  const token = (n: number) => Array.from({ length: n }, () => pick([...ALNUM])).join('');
  const chunks: string[] = [];
  const planted: string[] = [];
  let size = 0;
  let nextPlant = 20_000;
  while (size < bytes) {
    let chunk: string;
    switch (Math.floor(rand() * 5)) {
      case 0:
        chunk = `{"id":"${token(12)}","status":"${word()}","message":"${word()} ${word()} ${word()}","n":${Math.floor(rand() * 1e6)}}\n`;
        break;
      case 1:
        chunk = `<div class="${word()}"><a href="/p/${token(8)}?q=${word()}&amp;x=${token(4)}">${word()} ${word()}</a></div>\n`;
        break;
      case 2:
        chunk = `https://api.example.test/v1/${word()}/${token(10)}?token=${token(16)}&page=${Math.floor(rand() * 100)}\n`;
        break;
      case 3:
        chunk = `2026-04-01T12:00:00.000Z INFO ${word()} ${word()} ${word()} ${word()} ${word()} ${word()} ${word()}\n`;
        break;
      default:
        chunk = `data:${Buffer.from(token(48)).toString('base64')}\n`;
    }
    if (size >= nextPlant) {
      const form = pick(formsOf(pick(secrets)));
      planted.push(form);
      chunk = `${chunk.slice(0, -1)} ${form}\n`;
      nextPlant += 20_000;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { text: chunks.join(''), planted };
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { mb: 50, secrets: 100, rounds: 3 });
  const rand = prng(20260401);
  const secrets = makeSecrets(opts.secrets, rand);
  const { text, planted } = makeText(opts.mb * 1024 * 1024, secrets, rand);

  const buildStart = performance.now();
  const scrubber = new Scrubber(secrets);
  scrubber.scrubText('warm up the matcher');
  const buildMs = performance.now() - buildStart;

  let best = Number.POSITIVE_INFINITY;
  let out = '';
  for (let r = 0; r < opts.rounds; r++) {
    const t0 = performance.now();
    out = scrubber.scrubText(text);
    best = Math.min(best, performance.now() - t0);
  }
  const leaked = planted.filter((p) => out.includes(p)).length;
  if (leaked > 0) throw new Error(`${leaked} of ${planted.length} planted secret forms survived scrubbing`);
  const mb = text.length / (1024 * 1024);
  const forms = new Set(secrets.flatMap(formsOf)).size;
  return {
    engine: 'RegExp (escaped alternatives, longest first)',
    secrets: secrets.length,
    patterns: forms,
    textMB: Number(mb.toFixed(1)),
    planted: planted.length,
    buildMs: Number(buildMs.toFixed(1)),
    bestMs: Number(best.toFixed(0)),
    mbPerSecond: Number((mb / (best / 1000)).toFixed(0)),
    targetMbPerSecond: 200,
  };
}
