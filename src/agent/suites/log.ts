/**
 * The log the user sees for a suite run: what the install and the tests printed (stdout and stderr,
 * line by line, with the phase) and the agent's own notes ("installing with pnpm", "cancelled"),
 * capped at SUITE_LOG_MAX_BYTES. Past the cap lines are counted, not kept, and one note says so.
 * Secrets are scrubbed later, with the whole result (the daemon's scrubber).
 */
import { StringDecoder } from 'node:string_decoder';

export type SuitePhase = 'setup' | 'install' | 'test' | 'agent';

export interface SuiteLogLine {
  time: string;
  phase: SuitePhase;
  stream: 'stdout' | 'stderr' | 'agent';
  msg: string;
}

const LINE_MAX = 8 * 1024;
// Playwright's list reporter colours and redraws; none of that belongs in a stored log.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export class SuiteLog {
  readonly #lines: SuiteLogLine[] = [];
  readonly #maxBytes: number;
  #bytes = 0;
  #dropped = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  add(phase: SuitePhase, stream: SuiteLogLine['stream'], raw: string): void {
    let msg = raw.replace(ANSI, '').replace(/\r$/, '');
    if (msg.length > LINE_MAX) msg = `${msg.slice(0, LINE_MAX)} [line cut at ${LINE_MAX} characters]`;
    const size = Buffer.byteLength(msg) + 1;
    if (this.#bytes + size > this.#maxBytes) {
      this.#dropped += size;
      return;
    }
    this.#bytes += size;
    this.#lines.push({ time: new Date().toISOString(), phase, stream, msg });
  }

  note(msg: string): void {
    this.add('agent', 'agent', msg);
  }

  /** A line splitter for one stream of one process. */
  sink(phase: SuitePhase, stream: 'stdout' | 'stderr'): { write(chunk: Buffer): void; end(): void } {
    const decoder = new StringDecoder('utf8');
    let partial = '';
    return {
      write: (chunk) => {
        partial += decoder.write(chunk);
        let nl = partial.indexOf('\n');
        while (nl >= 0) {
          this.add(phase, stream, partial.slice(0, nl));
          partial = partial.slice(nl + 1);
          nl = partial.indexOf('\n');
        }
        while (partial.length > LINE_MAX) {
          this.add(phase, stream, partial.slice(0, LINE_MAX));
          partial = partial.slice(LINE_MAX);
        }
      },
      end: () => {
        partial += decoder.end();
        if (partial !== '') this.add(phase, stream, partial);
        partial = '';
      },
    };
  }

  /** The kept lines, plus a closing note when some were dropped at the cap. */
  lines(): SuiteLogLine[] {
    if (this.#dropped === 0) return [...this.#lines];
    return [
      ...this.#lines,
      {
        time: new Date().toISOString(),
        phase: 'agent',
        stream: 'agent',
        msg: `[log truncated: ${this.#dropped} more bytes were dropped past the ${this.#maxBytes}-byte cap (SUITE_LOG_MAX_BYTES)]`,
      },
    ];
  }

  /** The last `n` lines of a phase that went to stderr or stdout, for a one-line error summary. */
  tail(phase: SuitePhase, n: number): string[] {
    return this.#lines
      .filter((l) => l.phase === phase && l.msg.trim() !== '')
      .slice(-n)
      .map((l) => l.msg.trim());
  }
}
