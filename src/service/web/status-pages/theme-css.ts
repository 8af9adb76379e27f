/**
 * A status page's themeColors as its own stylesheet (the CSP allows no inline style): each palette
 * sets the colour variables of assets/web.css. The URL carries a hash of the colours, so it can be
 * cached for long and changes when they do. Colours are validated hex values (the API's schema).
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { ThemePalette } from '../../store/status-pages-types.ts';
import type { OpenStatusPage } from './resolve.ts';

const VARIABLES: Record<keyof ThemePalette, string> = {
  bodyBackgroundColor: '--bg',
  headerBackgroundColor: '--header-bg',
  headerFontColor: '--header-fg',
  titleFontColor: '--title',
  bodyFontColor: '--fg',
  bodyFontColorMuted: '--muted',
  navigationFontColor: '--nav',
  linkFontColor: '--link',
  cardBackgroundColor: '--card',
  borderColor: '--border',
  primaryButtonBackgroundColor: '--button-bg',
  primaryButtonFontColor: '--button-fg',
};

function declarations(palette: ThemePalette): string {
  return (Object.keys(VARIABLES) as (keyof ThemePalette)[])
    .map((key) => `${VARIABLES[key]}: ${palette[key]};`)
    .join(' ');
}

export function themeStylesheet(found: OpenStatusPage): string | null {
  const colors = found.page.themeColors;
  if (!colors) return null;
  const light = declarations(colors.light);
  const dark = declarations(colors.dark);
  return `html[data-theme="light"], html[data-theme="auto"] { ${light} }
html[data-theme="dark"] { ${dark} }
@media (prefers-color-scheme: dark) { html[data-theme="auto"] { ${dark} } }
`;
}

/** The stylesheet's URL, or null when the page has no theme colours (web.css's colours apply). */
export function themeStylesheetUrl(found: OpenStatusPage): string | null {
  const css = themeStylesheet(found);
  if (css === null) return null;
  return `${found.base}theme.css?v=${createHash('sha256').update(css).digest('hex').slice(0, 12)}`;
}

export function sendThemeStylesheet(reply: FastifyReply, found: OpenStatusPage): FastifyReply {
  const css = themeStylesheet(found) ?? '';
  return reply
    .type('text/css; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', `${found.page.isPrivate ? 'private' : 'public'}, max-age=31536000, immutable`)
    .send(css);
}
