/**
 * `outpost run CHECK_ID… [--wait]`: runs checks now through the public API (a check session per
 * check, POST /v2/check-sessions/trigger). Without --wait it prints each session's id and exits 0;
 * with --wait it prints one line per run as its verdict arrives (check name, location, verdict,
 * response time) and exits 0 when every session passed (or was only degraded), 1 otherwise.
 *
 * Settings: OUTPOST_URL (the service, default http://localhost:8080), OUTPOST_API_KEY (a user key,
 * op_…) and OUTPOST_ACCOUNT_ID. A missing or refused key is a configuration error (exit 2).
 */
import { type Env, readRequiredString, readUrl } from '../shared/env.ts';
import { ConfigError, EXIT } from '../shared/errors.ts';

interface Client {
  base: URL;
  headers: Record<string, string>;
}

interface SessionResult {
  checkResultId: string;
  name?: string;
  runLocation: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  isCancelled: boolean;
  responseTime: number | null;
}

interface Session {
  checkSessionId: string;
  name?: string;
  status: string;
  runLocations: string[];
  results?: SessionResult[];
}

export interface RunCommand {
  checkIds: string[];
  wait: boolean;
  out?: (line: string) => void;
}

/** How long each completion request may be held: the longest a verdict waits to be printed. */
const WAIT_SECONDS = 1;

export async function runChecks(env: Env, cmd: RunCommand): Promise<number> {
  const client = clientOf(env);
  const out = cmd.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = await call(client, 'POST', '/v2/check-sessions/trigger', { target: { checkId: cmd.checkIds } });
  if (started.status !== 201) return failed(`could not start the checks: ${messageOf(started)}`);
  const sessions = (started.body as { sessions: Session[] }).sessions;
  if (!cmd.wait) {
    for (const s of sessions) out(s.checkSessionId);
    return EXIT.ok;
  }
  const outcomes = await Promise.all(sessions.map((s) => follow(client, s, out)));
  return outcomes.every(Boolean) ? EXIT.ok : EXIT.failure;
}

function clientOf(env: Env): Client {
  const base = readUrl(env, 'OUTPOST_URL', 'http://localhost:8080');
  const apiKey = readRequiredString(
    env,
    'OUTPOST_API_KEY',
    'set it to a user API key (op_…; `outpost account create` prints one)',
  );
  const accountId = readRequiredString(env, 'OUTPOST_ACCOUNT_ID', "set it to the key's account id");
  return { base, headers: { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId } };
}

/**
 * Prints each run's verdict as it arrives until the session is done; true when it passed. Each
 * completion request is held up to WAIT_SECONDS, then the session is read for the verdicts so far.
 */
async function follow(client: Client, session: Session, out: (line: string) => void): Promise<boolean> {
  const printed = new Set<string>();
  const print = (s: Session) => {
    for (const r of s.results ?? []) {
      if (printed.has(r.checkResultId)) continue;
      printed.add(r.checkResultId);
      out(lineOf(r.name ?? s.name ?? '', r.runLocation, verdictOf(r), r.responseTime));
    }
  };
  const id = encodeURIComponent(session.checkSessionId);
  for (;;) {
    const done = await call(client, 'GET', `/v2/check-sessions/${id}/completion?maxWaitSeconds=${WAIT_SECONDS}`);
    if (done.status === 200) {
      const final = done.body as Session;
      print(final);
      // A location whose run ended without a result (expired unleased, cancelled) gets a line too.
      const reported = new Set((final.results ?? []).map((r) => r.runLocation));
      for (const loc of final.runLocations)
        if (!reported.has(loc)) out(lineOf(final.name ?? '', loc, final.status.toLowerCase(), null));
      return final.status === 'PASSED' || final.status === 'DEGRADED';
    }
    if (done.status !== 408)
      throw new Error(`awaiting check session ${session.checkSessionId} failed: ${messageOf(done)}`);
    const now = await call(client, 'GET', `/v2/check-sessions/${id}`);
    if (now.status === 200) print(now.body as Session);
  }
}

function verdictOf(r: SessionResult): string {
  if (r.isCancelled) return 'cancelled';
  if (r.hasFailures || r.hasErrors) return 'failed';
  return r.isDegraded ? 'degraded' : 'passed';
}

const lineOf = (name: string, location: string, verdict: string, ms: number | null) =>
  [name, location, verdict, ms === null ? '-' : `${Math.round(ms)} ms`].join('\t');

async function call(
  client: Client,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(new URL(path, client.base), {
      method,
      headers: { ...client.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    const reason = ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message;
    throw new ConfigError(
      'OUTPOST_URL',
      `OUTPOST_URL=${client.base.href} could not be reached (${reason}); is the service running there?`,
    );
  }
  const text = await res.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (res.status === 401) {
    throw new ConfigError(
      'OUTPOST_API_KEY',
      `the service refused OUTPOST_API_KEY for OUTPOST_ACCOUNT_ID (${messageOf({ status: 401, body: parsed })})`,
    );
  }
  return { status: res.status, body: parsed };
}

const messageOf = (res: { status: number; body: unknown }) =>
  `${res.status} ${(res.body as { message?: string } | null)?.message ?? ''}`.trim();

function failed(message: string): number {
  process.stderr.write(`outpost run: ${message}\n`);
  return EXIT.failure;
}
