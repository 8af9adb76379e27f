/**
 * Artifacts on the agent: runners add files for a run (`uploader.forRun(runId).add({...})` or
 * `uploader.add(runId, {...})`), the result carries `details.artifacts` / `details.artifactNotes`,
 * and the uploader streams the files to the service. See uploader.ts and docs/protocol.md.
 */
import type { Dispatcher } from 'undici';
import type { ArtifactUploaderConfig } from './config.ts';
import { ArtifactHttp } from './http.ts';
import { ArtifactUploader } from './uploader.ts';
import type { Log } from '../../shared/log.ts';

export { type ArtifactUploaderConfig, loadArtifactUploaderConfig } from './config.ts';
export { ArtifactHttp } from './http.ts';
export { isTextArtifact, scrubTextArtifact } from './scrub.ts';
export { type ArtifactAddResult, type ArtifactSpec, ArtifactUploader, RunArtifacts } from './uploader.ts';

/** The uploader over the agent's own connection to the service (same proxy and keep-alive pool). */
export function openArtifactUploader(options: {
  config: ArtifactUploaderConfig;
  apiUrl: URL;
  apiKey: string;
  dispatcher: Dispatcher;
  log: Log;
}): Promise<ArtifactUploader> {
  const http = new ArtifactHttp({ apiUrl: options.apiUrl, apiKey: options.apiKey, dispatcher: options.dispatcher });
  return ArtifactUploader.open({ config: options.config, http, log: options.log });
}
