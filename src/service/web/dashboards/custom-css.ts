/**
 * A dashboard's customCSS, made safe to serve as the page's own stylesheet. The CSP already keeps
 * scripts and remote styles out; this keeps the CSS from loading anything from elsewhere (a tracking
 * image, a remote font, an attribute-selector exfiltration), from importing other sheets, and from
 * using the old script-in-CSS hooks of some browsers. Parsed with postcss, so a rule is judged as the
 * browser will read it, after CSS escapes are undone (`\75 rl(` is `url(`).
 */
import postcss, { type AtRule, type Declaration } from 'postcss';

/** Properties that once ran script (IE's behavior/expression, Firefox's XBL binding). */
const SCRIPT_PROPERTIES = new Set(['behavior', '-moz-binding']);

/** The result: the CSS to serve, and what was dropped (for a comment at its top). */
export interface SanitizedCss {
  css: string;
  dropped: string[];
}

/** Undoes CSS escapes (`\75 ` → `u`, `\(` → `(`), as the browser's tokenizer does. */
function unescapeCss(value: string): string {
  return value
    .replace(/\\([0-9a-f]{1,6})[ \t\n\r\f]?/gi, (_m, hex: string) =>
      String.fromCodePoint(Number.parseInt(hex, 16) || 0xfffd),
    )
    .replace(/\\(.)/g, '$1');
}

/** A URL that stays on this service (relative, not protocol-relative) or is inline data. */
export function isAllowedCssUrl(target: string): boolean {
  const url = target.trim().replace(/\\/g, '/');
  if (/^data:/i.test(url)) return true;
  return !/^[a-z][a-z0-9+.-]*:/i.test(url) && !url.startsWith('//');
}

/** Every URL a value names: url()/src() targets, and the strings of image-set(). */
function urlsIn(value: string): string[] {
  const urls = [...value.matchAll(/\b(?:url|src)\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))/gi)].map(
    (m) => m[1] ?? m[2] ?? m[3] ?? '',
  );
  if (/image-set\(/i.test(value))
    urls.push(...[...value.matchAll(/"([^"]*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2] ?? ''));
  return urls;
}

/** Why a declaration must go, or undefined when it may stay. */
function declarationProblem(decl: Declaration): string | undefined {
  const prop = unescapeCss(decl.prop).toLowerCase();
  const value = unescapeCss(decl.value);
  if (SCRIPT_PROPERTIES.has(prop)) return `${prop}`;
  if (/expression\s*\(/i.test(value) || /javascript:/i.test(value)) return `${prop}: script in a value`;
  // The URL itself is not repeated: the served sheet should name no other origin at all.
  return urlsIn(value).some((url) => !isAllowedCssUrl(url)) ? `${prop}: a URL of another origin` : undefined;
}

function atRuleProblem(rule: AtRule): string | undefined {
  const name = unescapeCss(rule.name).toLowerCase();
  if (name === 'import') return '@import';
  if (name === 'font-face') {
    let remote = false;
    rule.walkDecls((decl) => {
      remote ||= urlsIn(unescapeCss(decl.value)).some((url) => !isAllowedCssUrl(url));
    });
    if (remote) return '@font-face from another origin';
  }
  return undefined;
}

export function sanitizeCustomCss(source: string): SanitizedCss {
  let root: postcss.Root;
  try {
    root = postcss.parse(source);
  } catch (err) {
    // Unparseable CSS could be read differently by a browser than by us: serve none of it.
    return {
      css: '',
      dropped: [
        `the whole sheet: ${(err as Error).name === 'CssSyntaxError' ? (err as postcss.CssSyntaxError).reason : 'unreadable'}`,
      ],
    };
  }
  const dropped: string[] = [];
  root.walkAtRules((rule) => {
    const problem = atRuleProblem(rule);
    if (problem) {
      dropped.push(problem);
      rule.remove();
    }
  });
  root.walkDecls((decl) => {
    const problem = declarationProblem(decl);
    if (problem) {
      dropped.push(problem);
      decl.remove();
    }
  });
  // A separate stylesheet cannot end a <style> element, but the sequence has no business in CSS:
  // postcss escapes it in strings; this catches comments and the rest (`\3c ` is `<` to CSS).
  const css = root.toString().replace(/<\/(style)/gi, '\\3c /$1');
  return { css, dropped };
}

/** The sheet as served: what was dropped, named in a comment, then the rest. */
export function servedCustomCss(source: string | null | undefined): string {
  if (!source) return '';
  const { css, dropped } = sanitizeCustomCss(source);
  if (dropped.length === 0) return css;
  const names = dropped.map((d) => d.replace(/\*\//g, '* /').replace(/[\r\n]/g, ' ')).join('; ');
  return `/* outpost dropped: ${names} */\n${css}`;
}
