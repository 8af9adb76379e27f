/**
 * Renders a status badge as SVG in the reference's BadgeStyle shapes (after shields.io's, which
 * READMEs are full of): a label box (the check or group name) and a message box (the status) in the
 * status colour. The markup is built with the web pages' htm/Preact renderer, which escapes every
 * text and attribute value, so a name cannot add markup; characters XML forbids are dropped first.
 */
import type { VNode } from 'preact';
import { html, renderFragment } from '../web/html.ts';
import { type BadgeTheme, PALETTES, SOCIAL_PALETTES } from './palette.ts';
import type { BadgeStatus } from './status.ts';
import { type TextStyle, textWidth } from './text-width.ts';

export const BADGE_STYLES = ['flat', 'plastic', 'flat-square', 'for-the-badge', 'social'] as const;
export type BadgeStyle = (typeof BADGE_STYLES)[number];

export interface BadgeContent {
  label: string;
  message: string;
  status: BadgeStatus;
}

/** Longest label shown, in characters; longer names end in an ellipsis. */
export const LABEL_MAX = 48;
const FONT = 'Verdana,Geneva,DejaVu Sans,sans-serif';

interface Shape {
  height: number;
  radius: number;
  fontSize: number;
  padding: number;
  label: TextStyle;
  message: TextStyle;
  uppercase: boolean;
  /** Gradient stops over the boxes ([offset, colour, opacity]); none for the flat-coloured shapes. */
  gloss: Array<[number, string, number]>;
}

const SHAPES: Record<Exclude<BadgeStyle, 'social'>, Shape> = {
  flat: { height: 20, radius: 3, fontSize: 11, padding: 6, label: { size: 11 }, message: { size: 11 }, uppercase: false, gloss: [[0, '#bbb', 0.1], [1, '#000', 0.1]] },
  plastic: {
    ...{ height: 18, radius: 4, fontSize: 11, padding: 6, label: { size: 11 }, message: { size: 11 }, uppercase: false },
    gloss: [[0, '#fff', 0.7], [0.1, '#aaa', 0.1], [0.9, '#000', 0.3], [1, '#000', 0.5]],
  },
  'flat-square': { height: 20, radius: 0, fontSize: 11, padding: 6, label: { size: 11 }, message: { size: 11 }, uppercase: false, gloss: [] },
  'for-the-badge': {
    ...{ height: 28, radius: 0, fontSize: 10, padding: 12, uppercase: true, gloss: [] },
    ...{ label: { size: 10, letterSpacing: 1.25 }, message: { size: 10, bold: true, letterSpacing: 1.25 } },
  },
};

/** The text as the badge may hold it: XML-forbidden characters out, one line, at most `max` characters. */
export function badgeText(text: string, max: number): string {
  // XML 1.0 allows tab, newline and carriage return among the controls; here they become spaces too.
  // A lone surrogate (not a character at all) becomes U+FFFD.
  const clean = text
    .toWellFormed()
    .replace(/[\p{Cc}\ufffe\uffff]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...clean];
  return chars.length > max ? `${chars.slice(0, max - 1).join('').trimEnd()}…` : clean;
}

export function renderBadge(content: BadgeContent, style: BadgeStyle, theme: BadgeTheme): string {
  const label = badgeText(content.label, LABEL_MAX) || 'check';
  const message = badgeText(content.message, LABEL_MAX);
  const body = style === 'social' ? socialBadge(label, message, content.status, theme) : boxedBadge(SHAPES[style], label, message, content.status, theme);
  return renderFragment(body);
}

interface Box {
  text: string;
  x: number;
  width: number;
  textWidth: number;
}

function boxes(shape: Pick<Shape, 'padding' | 'label' | 'message' | 'uppercase'>, label: string, message: string): [Box, Box] {
  const [l, m] = shape.uppercase ? [label.toUpperCase(), message.toUpperCase()] : [label, message];
  const lw = Math.round(textWidth(l, shape.label));
  const mw = Math.round(textWidth(m, shape.message));
  const left = { text: l, x: 0, width: lw + 2 * shape.padding, textWidth: lw };
  return [left, { text: m, x: left.width, width: mw + 2 * shape.padding, textWidth: mw }];
}

function boxedBadge(shape: Shape, label: string, message: string, status: BadgeStatus, theme: BadgeTheme): VNode {
  const palette = PALETTES[theme];
  const [left, right] = boxes(shape, label, message);
  const width = left.width + right.width;
  const { height } = shape;
  const baseline = Math.round(height / 2 + shape.fontSize * 0.35);
  const text = (box: Box, colour: string, bold: boolean | undefined) => html`
    <g font-weight=${bold ? 'bold' : null}>
      ${palette.textShadow ? html`<text x=${box.x + box.width / 2} y=${baseline + 1} fill="#010101" fill-opacity=".3" textLength=${box.textWidth} aria-hidden="true">${box.text}</text>` : null}
      <text x=${box.x + box.width / 2} y=${baseline} fill=${colour} textLength=${box.textWidth}>${box.text}</text>
    </g>`;
  return svgRoot(width, height, `${label}: ${message}`, html`
    ${shape.gloss.length > 0 ? html`<linearGradient id="gloss" x2="0" y2="100%">${shape.gloss.map(([offset, colour, opacity]) => html`<stop offset=${offset} stop-color=${colour} stop-opacity=${opacity} />`)}</linearGradient>` : null}
    <clipPath id="round"><rect width=${width} height=${height} rx=${shape.radius} fill="#fff" /></clipPath>
    <g clip-path="url(#round)" shape-rendering=${shape.radius === 0 ? 'crispEdges' : null}>
      <rect width=${left.width} height=${height} fill=${palette.labelBackground} />
      <rect x=${right.x} width=${right.width} height=${height} fill=${palette.status[status]} />
      ${shape.gloss.length > 0 ? html`<rect width=${width} height=${height} fill="url(#gloss)" />` : null}
    </g>
    <g text-anchor="middle" font-family=${FONT} font-size=${shape.fontSize} letter-spacing=${shape.label.letterSpacing ?? null}>
      ${text(left, palette.labelText, shape.label.bold)}
      ${text(right, palette.messageText, shape.message.bold)}
    </g>`);
}

/** The social shape: a light name box and a speech bubble holding the status in its colour. */
function socialBadge(label: string, message: string, status: BadgeStatus, theme: BadgeTheme): VNode {
  const shape = { padding: 6, label: { size: 11, bold: true }, message: { size: 11 }, uppercase: false };
  const [left, bubble] = boxes(shape, label, message);
  const gap = 6;
  const right = { ...bubble, x: left.width + gap };
  const width = right.x + right.width + 1;
  const colours = SOCIAL_PALETTES[theme];
  return svgRoot(width, 20, `${label}: ${message}`, html`
    <linearGradient id="face" x2="0" y2="100%"><stop offset="0" stop-color=${colours.faceTop} /><stop offset="1" stop-color=${colours.faceBottom} /></linearGradient>
    <g stroke=${colours.stroke}>
      <rect x="0.5" y="0.5" width=${left.width - 1} height="19" rx="2" fill="url(#face)" />
      <rect x=${right.x + 0.5} y="0.5" width=${right.width - 1} height="19" rx="2" fill=${colours.paper} />
      <path d=${`M${right.x + 0.5} 6.5 l-3 3.5 l3 3.5`} fill=${colours.paper} />
    </g>
    <g text-anchor="middle" font-family=${FONT} font-size="11">
      <text x=${left.width / 2} y="14" fill=${colours.ink} font-weight="bold" textLength=${left.textWidth}>${left.text}</text>
      <text x=${right.x + right.width / 2} y="14" fill=${colours.status[status]} textLength=${right.textWidth}>${right.text}</text>
    </g>`);
}

function svgRoot(width: number, height: number, title: string, children: VNode): VNode {
  return html`<svg xmlns="http://www.w3.org/2000/svg" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${title}><title>${title}</title>${children}</svg>`;
}
