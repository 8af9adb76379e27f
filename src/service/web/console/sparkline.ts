/**
 * A sparkline of response times as inline SVG, drawn on the server: presentation attributes only
 * (the CSP allows no style attribute), its colour from console.css, its meaning in its label.
 */
import { html } from '../html.ts';

const WIDTH = 120;
const HEIGHT = 28;
const PAD = 2;

/** `times`: oldest first, in milliseconds. */
export function sparkline(times: readonly number[]) {
  if (times.length === 0) return html`<span class="muted">no runs yet</span>`;
  const max = Math.max(...times);
  const min = Math.min(...times);
  const span = max - min || 1;
  const step = times.length > 1 ? (WIDTH - 2 * PAD) / (times.length - 1) : 0;
  const points = times.map((t, i) => {
    const x = PAD + i * step;
    const y = HEIGHT - PAD - ((t - min) / span) * (HEIGHT - 2 * PAD);
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  });
  const label = `Response times of the last ${times.length} runs: ${Math.round(min)} to ${Math.round(max)} ms, latest ${Math.round(times.at(-1) ?? 0)} ms`;
  return html`<svg class="sparkline" role="img" aria-label=${label} viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} width=${WIDTH} height=${HEIGHT}>
    ${times.length > 1 ? html`<polyline points=${points.join(' ')} fill="none" stroke-width="1.5" />` : null}
    <circle cx=${points.at(-1)?.split(',')[0]} cy=${points.at(-1)?.split(',')[1]} r="2" />
  </svg>`;
}
