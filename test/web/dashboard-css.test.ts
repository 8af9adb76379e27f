import { describe, expect, it } from 'vitest';
import { sanitizeCustomCss, servedCustomCss } from '../../src/service/web/dashboards/custom-css.ts';

const rulesOf = (css: string) => sanitizeCustomCss(css).css;

describe("a dashboard's customCSS, sanitized", () => {
  it.each([
    [
      '@import of any sheet',
      '@import url(https://evil.test/a.css); @IMPORT "local.css"; a { color: red }',
      'a { color: red }',
    ],
    // postcss cannot read an escaped at-rule name, and what it cannot read is not served at all.
    ['an escaped @import, with the whole sheet', '@\\69mport "https://evil.test/a.css"; a { color: red }', ''],
    ['a remote url()', 'a { color: red; background: url(https://evil.test/x.png) }', 'a { color: red }'],
    ['a protocol-relative url()', 'a { background: url("//evil.test/x.png") }', 'a { }'],
    ['a backslash url that browsers read as protocol-relative', 'a { background: url(/\\/evil.test/x) }', 'a { }'],
    ['a url() spelt with CSS escapes', 'a { background: \\75 rl(https://evil.test/x) }', 'a { }'],
    ['a remote image-set()', 'a { background-image: image-set("https://evil.test/i.png" 1x) }', 'a { }'],
    ['expression()', 'a { width: expression(alert(1)); color: red }', 'a { color: red }'],
    ['javascript: URLs', 'a { background: url(javascript:alert(1)) }', 'a { }'],
    ['behavior and -moz-binding', 'a { behavior: url(x.htc); -moz-binding: url(x.xml#y) }', 'a { }'],
    [
      '@font-face from another origin',
      '@font-face { font-family: x; src: url(https://evil.test/f.woff) } a { color: red }',
      'a { color: red }',
    ],
  ])('drops %s', (_what, css, expected) => {
    expect(rulesOf(css).replace(/\s+/g, ' ').trim()).toBe(expected);
  });

  it('keeps same-origin and data: URLs and same-origin fonts', () => {
    const css =
      '@font-face { font-family: y; src: url(/assets/f.woff) } a { background: url("data:image/png;base64,AAAA") } b { background: url(logo.png) }';
    expect(rulesOf(css)).toBe(css);
  });

  it('never lets </style> through, in strings or comments', () => {
    const served = rulesOf('a::after { content: "</style><script>alert(1)</script>" } /* </STYLE> */');
    expect(served.toLowerCase()).not.toContain('</style');
  });

  it('serves nothing of a sheet it cannot parse, saying so in a comment', () => {
    expect(servedCustomCss('a { color: red')).toBe('/* outpost dropped: the whole sheet: Unclosed block */\n');
    expect(servedCustomCss('a { color: red } */ }')).not.toContain('color');
  });
});
