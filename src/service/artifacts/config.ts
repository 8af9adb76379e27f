import path from 'node:path';
import { DEFAULT_ARTIFACT_MAX_BYTES } from '../../shared/artifacts.ts';
import { type Env, readInteger } from '../../shared/env.ts';

/** The service's artifact settings (README lists them). */
export interface ArtifactConfig {
  /** ARTIFACT_MAX_BYTES: uploads declaring more are refused with 413. */
  maxBytes: number;
  /** Where the local-disk store keeps files: DATA_DIR/artifacts. */
  dir: string;
  /** ARTIFACT_INCOMPLETE_TTL_SECONDS: an upload not finished within this time is deleted. */
  incompleteTtlSeconds: number;
}

export function loadArtifactConfig(env: Env, dataDir: string): ArtifactConfig {
  return {
    maxBytes: readInteger(env, 'ARTIFACT_MAX_BYTES', DEFAULT_ARTIFACT_MAX_BYTES, {
      min: 1,
      max: Number.MAX_SAFE_INTEGER,
    }),
    dir: path.join(dataDir, 'artifacts'),
    incompleteTtlSeconds: readInteger(env, 'ARTIFACT_INCOMPLETE_TTL_SECONDS', 86_400, { min: 60, max: 30 * 86_400 }),
  };
}
