/**
 * Badge colours per theme (the reference's BadgeTheme). `default` is the familiar shields look (grey
 * name, bright status); `light` and `dark` suit READMEs read in those colour schemes. badge-maker picks
 * the text colour (white or dark) from each box's brightness, and puts white on every status colour here,
 * so the light and dark themes share status colours dark enough for white text at 4.5:1.
 */
import type { BadgeStatus } from './status.ts';

export const BADGE_THEMES = ['light', 'dark', 'default'] as const;
export type BadgeTheme = (typeof BADGE_THEMES)[number];

export interface BadgePalette {
  labelBackground: string;
  status: Record<BadgeStatus, string>;
}

const ACCESSIBLE_STATUS: Record<BadgeStatus, string> = {
  passing: '#1a7f37',
  degraded: '#9a6700',
  failing: '#cf222e',
  'no data': '#6e7781',
  deactivated: '#6e7781',
};

export const PALETTES: Record<BadgeTheme, BadgePalette> = {
  default: {
    labelBackground: '#555',
    status: { passing: '#4c1', degraded: '#dfb317', failing: '#e05d44', 'no data': '#9f9f9f', deactivated: '#9f9f9f' },
  },
  light: {
    labelBackground: '#eaeef2',
    status: ACCESSIBLE_STATUS,
  },
  dark: {
    labelBackground: '#30363d',
    status: ACCESSIBLE_STATUS,
  },
};
