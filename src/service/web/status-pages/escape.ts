/** Escaping for the markup this folder writes as strings (the Atom feed, the 90-day bars): text and quoted attribute values. */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Safe in XML and HTML text and in quoted attributes; control characters XML 1.0 forbids are dropped. */
export function escapeMarkup(text: string): string {
  // Most text has nothing to escape: one test instead of two replaces.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the same characters as below
  if (!/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff&<>"']/.test(text)) return text;
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters XML 1.0 does not allow
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)
  );
}
