/**
 * Text artifacts (logs, JSON and HTML reports) pass through the secret scrubber (src/agent/scrub/,
 * docs/secrets.md) before they leave the agent; this is the one place the uploader calls it.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { CheckDefinition } from '../../shared/checks/types.ts';
import { type Scrubber, scrubActive, scrubText } from '../scrub/index.ts';

/** What knows a job's secrets: its Scrubber (best), or its check's variables. */
export type ScrubSource = Scrubber | Pick<CheckDefinition, 'environmentVariables'>;

/**
 * Scrubs one piece of a text artifact: with the job's secrets when the runner said whose they are,
 * and always with the secrets of every job running now. Called once per line (a secret never spans
 * a newline in the formats concerned), so memory stays bounded whatever the file's size.
 */
export function scrubTextArtifact(text: string, source?: ScrubSource): string {
  return source ? scrubText(text, source) : scrubActive(text);
}

const TEXT_TYPES = new Set([
  'application/json',
  'application/x-ndjson',
  'application/xml',
  'application/javascript',
  'application/x-har+json',
  'image/svg+xml',
]);

/** Whether an artifact is text the scrubber must see (by content type; logs always are). */
export function isTextArtifact(contentType: string, kind: string): boolean {
  if (kind === 'log') return true;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type.startsWith('text/') || TEXT_TYPES.has(type) || type.endsWith('+json') || type.endsWith('+xml');
}

/** Lines longer than this are scrubbed in pieces rather than held whole (a minified bundle). */
const MAX_LINE_CHARS = 1024 * 1024;

/** A stream that scrubs UTF-8 text line by line, keeping the line endings. */
export class LineScrubber extends Transform {
  readonly #decoder = new StringDecoder('utf8');
  readonly #scrub: (text: string) => string;
  #carry = '';

  constructor(scrub: (text: string) => string = (text) => scrubTextArtifact(text)) {
    super();
    this.#scrub = scrub;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#emit(this.#carry + this.#decoder.write(chunk), false);
    done();
  }

  override _flush(done: TransformCallback): void {
    this.#emit(this.#carry + this.#decoder.end(), true);
    done();
  }

  #emit(text: string, final: boolean): void {
    const cut = text.lastIndexOf('\n') + 1;
    let whole = text.slice(0, cut);
    this.#carry = text.slice(cut);
    if (final || this.#carry.length > MAX_LINE_CHARS) {
      whole += this.#carry;
      this.#carry = '';
    }
    if (whole === '') return;
    // Scrubbed per line so a pattern anchored to a line still matches.
    this.push(
      Buffer.from(
        whole
          .split('\n')
          .map((line) => this.#scrub(line))
          .join('\n'),
        'utf8',
      ),
    );
  }
}
