import type { ThemePalette } from '../../src/service/store/status-pages-types.ts';

/** A status page theme of two colours: `bg` behind everything, `fg` for all text, borders and buttons. */
export function twoColourPalette(bg: string, fg: string): ThemePalette {
  return {
    bodyBackgroundColor: bg,
    headerBackgroundColor: bg,
    headerFontColor: fg,
    titleFontColor: fg,
    bodyFontColor: fg,
    bodyFontColorMuted: fg,
    navigationFontColor: fg,
    linkFontColor: fg,
    cardBackgroundColor: bg,
    borderColor: fg,
    primaryButtonBackgroundColor: fg,
    primaryButtonFontColor: bg,
  };
}
