/**
 * Renders a status badge as SVG with badge-maker, the shields.io renderer READMEs are full of: a label
 * box (the check or group name) and a message box (the status) in the status colour, in the reference's
 * BadgeStyle shapes (which are badge-maker's). badge-maker escapes the text and measures it with
 * Verdana's widths; characters XML forbids are dropped here first, and long names are cut.
 */
import { makeBadge } from 'badge-maker';
import { type BadgeTheme, PALETTES } from './palette.ts';
import type { BadgeStatus } from './status.ts';

export const BADGE_STYLES = ['flat', 'plastic', 'flat-square', 'for-the-badge', 'social'] as const;
export type BadgeStyle = (typeof BADGE_STYLES)[number];

export interface BadgeContent {
  label: string;
  message: string;
  status: BadgeStatus;
}

/** Longest label shown, in characters; longer names end in an ellipsis. */
export const LABEL_MAX = 48;

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
  return chars.length > max
    ? `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`
    : clean;
}

export function renderBadge(content: BadgeContent, style: BadgeStyle, theme: BadgeTheme): string {
  const palette = PALETTES[theme];
  return makeBadge({
    label: badgeText(content.label, LABEL_MAX) || 'check',
    message: badgeText(content.message, LABEL_MAX),
    labelColor: palette.labelBackground,
    color: palette.status[content.status],
    style,
  });
}
