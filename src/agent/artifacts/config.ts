import path from 'node:path';
import { DEFAULT_ARTIFACT_MAX_BYTES } from '../../shared/artifacts.ts';
import { type Env, readInteger } from '../../shared/env.ts';

/** 2 GiB of artifacts may wait on disk for the service: a dozen 150 MB videos. */
export const DEFAULT_ARTIFACT_QUEUE_MAX_BYTES = 2 * 1024 * 1024 * 1024;

/** The agent's artifact settings (README lists them). */
export interface ArtifactUploaderConfig {
  /** ARTIFACT_MAX_BYTES: larger artifacts are left out of the result with a note. */
  maxBytes: number;
  /** `${SPOOL_DIR}/artifacts`: copies of artifacts waiting for upload. */
  queueDir: string;
  /** ARTIFACT_QUEUE_MAX_BYTES: past it the oldest waiting artifacts are dropped (logged, counted). */
  queueMaxBytes: number;
}

export function loadArtifactUploaderConfig(env: Env, spoolDir: string): ArtifactUploaderConfig {
  const maxBytes = readInteger(env, 'ARTIFACT_MAX_BYTES', DEFAULT_ARTIFACT_MAX_BYTES, {
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
  });
  return {
    maxBytes,
    queueDir: path.join(spoolDir, 'artifacts'),
    // At least one artifact of the maximum size must fit, or the cap would be a lie.
    queueMaxBytes: readInteger(env, 'ARTIFACT_QUEUE_MAX_BYTES', Math.max(DEFAULT_ARTIFACT_QUEUE_MAX_BYTES, maxBytes), {
      min: maxBytes,
      max: Number.MAX_SAFE_INTEGER,
    }),
  };
}
