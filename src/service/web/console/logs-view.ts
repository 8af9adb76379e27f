/**
 * A result's log, from whichever runner wrote it: an API check's setup and teardown scripts, a
 * browser or multistep script's log, or a Playwright suite's job log. Shown as one list of lines.
 */
import type { RunResult } from '../../../shared/protocol.ts';
import { html } from '../html.ts';

/** A line of an API check script's log (apiCheckResult.jobLog.setup / .teardown). */
interface ScriptLogLine {
  time: string;
  stream: string;
  msg: string;
}

export interface ShownLogLine {
  time: string;
  source: string;
  msg: string;
}

function scriptLines(jobLog: Record<string, unknown> | null | undefined): ShownLogLine[] {
  if (!jobLog) return [];
  return (['setup', 'teardown'] as const).flatMap((stage) =>
    Array.isArray(jobLog[stage])
      ? (jobLog[stage] as ScriptLogLine[]).map((l) => ({ time: l.time, source: `${stage} ${l.stream}`, msg: l.msg }))
      : [],
  );
}

export function logLinesOf(result: RunResult): ShownLogLine[] {
  const d = result.details;
  const browser = d?.browserCheckResult ?? d?.multiStepCheckResult;
  if (browser)
    return browser.jobLog.map((l) => ({ time: new Date(l.time).toISOString(), source: l.level, msg: l.msg }));
  const suite = d?.playwrightCheckResult;
  if (suite) return suite.jobLog.map((l) => ({ time: l.time, source: `${l.phase} ${l.stream}`, msg: l.msg }));
  return scriptLines(result.apiCheckResult?.jobLog);
}

export function LogsView({ lines }: { lines: ShownLogLine[] }) {
  if (lines.length === 0) return null;
  const text = lines.map((l) => `${l.time}  ${l.source.padEnd(15)}  ${l.msg}`).join('\n');
  return html`<section aria-labelledby="logs-heading">
    <h2 id="logs-heading">Logs</h2>
    <pre class="logs" tabindex="0" aria-label="Log lines">${text}</pre>
  </section>`;
}
