/**
 * The width of badge text, so each box fits its words without a font on the server. The tables are
 * the advance widths (px at 11 px) of printable ASCII in DejaVu Sans, the fallback the SVG names after
 * Verdana, whose widths are close to them. Other characters take a typical width (wide scripts a
 * full em), so a name in another script gets a box about its size.
 */

/** Advance widths of U+0020…U+007E at 11 px, regular weight. */
const REGULAR = [
  3.5, 4.4, 5.1, 9.2, 7, 10.5, 8.6, 3, 4.3, 4.3, 5.5, 9.2, 3.5, 4, 3.5, 3.7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 3.7, 3.7, 9.2, 9.2, 9.2, 5.8, 11,
  7.5, 7.5, 7.7, 8.5, 7, 6.3, 8.5, 8.3, 3.2, 3.2, 7.2, 6.1, 9.5, 8.2, 8.7, 6.6, 8.7, 7.6, 7, 6.7, 8.1, 7.5, 10.9, 7.5, 6.7, 7.5, 4.3, 3.7,
  4.3, 9.2, 5.5, 5.5, 6.7, 7, 6, 7, 6.8, 3.9, 7, 7, 3.1, 3.1, 6.4, 3.1, 10.7, 7, 6.7, 7, 7, 4.5, 5.7, 4.3, 7, 6.5, 9, 6.5, 6.5, 5.8, 7, 3.7,
  7, 9.2,
];

/** The same at bold weight. */
const BOLD = [
  3.8, 5, 5.7, 9.2, 7.7, 11, 9.6, 3.4, 5, 5, 5.8, 9.2, 4.2, 4.6, 4.2, 4, 7.7, 7.7, 7.7, 7.7, 7.7, 7.7, 7.7, 7.7, 7.7, 7.7, 4.4, 4.4, 9.2, 9.2,
  9.2, 6.4, 11, 8.5, 8.4, 8.1, 9.1, 7.5, 7.5, 9, 9.2, 4.1, 4.1, 8.5, 7, 10.9, 9.2, 9.4, 8.1, 9.4, 8.5, 7.9, 7.5, 8.9, 8.5, 12.1, 8.5, 8, 8,
  5, 4, 5, 9.2, 5.5, 5.5, 7.4, 7.9, 6.5, 7.9, 7.5, 4.8, 7.9, 7.8, 3.8, 3.8, 7.3, 3.8, 11.5, 7.8, 7.6, 7.9, 7.9, 5.4, 6.5, 5.3, 7.8, 7.2,
  10.2, 7.1, 7.2, 6.4, 7.8, 4, 7.8, 9.2,
];

const TABLE_SIZE = 11;
/** Most letters of other alphabets are about as wide as a Latin lower-case letter. */
const OTHER_WIDTH = 7;
/** CJK, emoji and the like take a full em. */
const WIDE_WIDTH = 11;
const WIDE_FROM = 0x2e80;

export interface TextStyle {
  /** Font size in px. */
  size: number;
  bold?: boolean;
  /** Extra px after every character (for-the-badge spaces its capitals). */
  letterSpacing?: number;
}

/** The width in px `text` takes in `style`. */
export function textWidth(text: string, style: TextStyle): number {
  const table = style.bold ? BOLD : REGULAR;
  let width = 0;
  let count = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    width += code >= 0x20 && code <= 0x7e ? (table[code - 0x20] ?? OTHER_WIDTH) : code >= WIDE_FROM ? WIDE_WIDTH : OTHER_WIDTH;
    count++;
  }
  return (width * style.size) / TABLE_SIZE + count * (style.letterSpacing ?? 0);
}
