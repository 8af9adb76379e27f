/**
 * How an assertion's regular expression is written: `pattern`, or `/pattern/flags` as in
 * JavaScript. The agent compiles it to evaluate an assertion; the service compiles it to refuse one
 * that never could be, so both read it the same way. `g` is dropped: an assertion takes one match.
 */
export function compileAssertionRegex(source: string): RegExp {
  const literal = /^\/(.*)\/([dgimsuvy]*)$/s.exec(source);
  return literal ? new RegExp(literal[1] ?? '', (literal[2] ?? '').replace('g', '')) : new RegExp(source);
}
