/**
 * A result's artifacts on its page: screenshots inline, videos in a player, Playwright traces as a
 * link into the trace viewer, and every artifact as a download.
 */
import type { ArtifactRecord } from '../../store/artifact-types.ts';
import { html } from '../html.ts';
import { consoleArtifactUrl } from './result-artifacts.ts';
import { traceViewerUrl } from './trace-viewer.ts';

interface Props {
  checkId: string;
  resultId: string;
  artifacts: ArtifactRecord[];
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Raster and vector images a browser shows in <img> (an SVG there runs no script). */
function isImage(a: ArtifactRecord): boolean {
  return a.kind === 'screenshot' && a.contentType.startsWith('image/');
}

export function ArtifactsView({ checkId, resultId, artifacts }: Props) {
  if (artifacts.length === 0) return null;
  const url = (a: ArtifactRecord) => consoleArtifactUrl(checkId, resultId, a.name);
  const screenshots = artifacts.filter(isImage);
  const videos = artifacts.filter((a) => a.kind === 'video');
  const traces = artifacts.filter((a) => a.kind === 'trace');
  return html`<section aria-labelledby="artifacts-heading">
    <h2 id="artifacts-heading">Artifacts</h2>
    ${screenshots.map(
      (a) => html`<figure class="artifact-screenshot">
        <img src=${url(a)} alt=${`Screenshot ${a.name}`} loading="lazy" />
        <figcaption>${a.name}</figcaption>
      </figure>`,
    )}
    ${videos.map(
      (a) => html`<figure class="artifact-video">
        <video src=${url(a)} controls preload="metadata" aria-label=${`Video ${a.name}`}></video>
        <figcaption>${a.name}</figcaption>
      </figure>`,
    )}
    ${
      traces.length > 0
        ? html`<ul class="artifact-traces">
          ${traces.map((a) => html`<li><a href=${traceViewerUrl(url(a))}>Open ${a.name} in the trace viewer</a></li>`)}
        </ul>`
        : null
    }
    <h3>Downloads</h3>
    <ul class="artifact-list">
      ${artifacts.map((a) => html`<li><a href=${url(a)} download=${a.name}>${a.name}</a> <span class="muted">${a.kind}, ${sizeText(a.size)}</span></li>`)}
    </ul>
  </section>`;
}
