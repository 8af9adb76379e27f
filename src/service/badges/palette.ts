/**
 * Badge colours per theme (the reference's BadgeTheme). `default` is the familiar shields look (grey
 * name, bright status); `light` and `dark` suit READMEs read in those colour schemes, with text that
 * keeps a contrast of at least 4.5:1 on its box.
 */
import type { BadgeStatus } from './status.ts';

export const BADGE_THEMES = ['light', 'dark', 'default'] as const;
export type BadgeTheme = (typeof BADGE_THEMES)[number];

export interface BadgePalette {
  labelBackground: string;
  labelText: string;
  messageText: string;
  status: Record<BadgeStatus, string>;
  /** The dark offset copy of white text that shields-style badges draw for legibility. */
  textShadow: boolean;
}

export const PALETTES: Record<BadgeTheme, BadgePalette> = {
  default: {
    labelBackground: '#555',
    labelText: '#fff',
    messageText: '#fff',
    status: { passing: '#4c1', degraded: '#dfb317', failing: '#e05d44', 'no data': '#9f9f9f', deactivated: '#9f9f9f' },
    textShadow: true,
  },
  light: {
    labelBackground: '#eaeef2',
    labelText: '#1f2328',
    messageText: '#fff',
    status: { passing: '#1a7f37', degraded: '#9a6700', failing: '#cf222e', 'no data': '#6e7781', deactivated: '#6e7781' },
    textShadow: false,
  },
  dark: {
    labelBackground: '#30363d',
    labelText: '#e6edf3',
    messageText: '#0d1117',
    status: { passing: '#3fb950', degraded: '#d29922', failing: '#f85149', 'no data': '#8b949e', deactivated: '#8b949e' },
    textShadow: false,
  },
};

/** The social shape's colours: a name box with a soft gradient and a bubble with the status as coloured text. */
export interface SocialPalette {
  faceTop: string;
  faceBottom: string;
  stroke: string;
  ink: string;
  paper: string;
  status: Record<BadgeStatus, string>;
}

const LIGHT_SOCIAL: SocialPalette = { faceTop: '#fcfcfc', faceBottom: '#eee', stroke: '#d5d5d5', ink: '#333', paper: '#fff', status: PALETTES.light.status };

export const SOCIAL_PALETTES: Record<BadgeTheme, SocialPalette> = {
  default: LIGHT_SOCIAL,
  light: LIGHT_SOCIAL,
  dark: { faceTop: '#30363d', faceBottom: '#262c33', stroke: '#484f58', ink: '#e6edf3', paper: '#21262d', status: PALETTES.dark.status },
};
