/**
 * The artifact upload protocol (screenshots, videos, traces, reports, logs, captures): names,
 * headers and shapes both sides import. docs/protocol.md "Artifacts" explains the flow.
 *
 * An artifact is uploaded tus-style: PUT starts (or restarts) it from byte 0, HEAD says how many
 * bytes the service holds, PATCH continues from exactly that offset. The service verifies the
 * SHA-256 the agent declared once the last byte is in.
 */
import { AGENT_API_PREFIX } from './protocol.ts';

/** What an artifact is; the asset manifest shows `other` as the reference's `file`. */
export const ARTIFACT_KINDS = ['screenshot', 'video', 'trace', 'report', 'log', 'pcap', 'other'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** 150 MiB, the reference agent's limit since v6.3.2; ARTIFACT_MAX_BYTES changes it on either side. */
export const DEFAULT_ARTIFACT_MAX_BYTES = 150 * 1024 * 1024;

/**
 * Artifact names become file names on the service's disk (and later object keys), so only a
 * conservative set is allowed: a letter or digit first (no `.`/`..`, no hidden files), then
 * letters, digits, `.`, `_` and `-`; no slash or backslash can ever appear.
 */
export const ARTIFACT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
export const ARTIFACT_NAME_RULE = '1 to 200 characters: a letter or digit, then letters, digits, ".", "_" or "-"';

/** Run ids are UUIDs; they are a directory name on the service, so the same caution applies. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9-]{1,100}$/;

export function isSafeArtifactName(name: string): boolean {
  return ARTIFACT_NAME_PATTERN.test(name);
}

export const ARTIFACT_HEADERS = {
  /** PUT: the artifact's total size in bytes. HEAD/GET answers carry it too. */
  length: 'upload-length',
  /** PATCH: where this body starts. HEAD/GET/PUT/PATCH answers: the bytes the service holds. */
  offset: 'upload-offset',
  /** PUT: one of ARTIFACT_KINDS. */
  kind: 'x-artifact-kind',
  /** PUT: lowercase hex SHA-256 of the whole artifact; checked when the last byte arrives. */
  sha256: 'x-artifact-sha256',
} as const;

export function artifactPath(runId: string, name: string): string {
  return `${AGENT_API_PREFIX}/runs/${encodeURIComponent(runId)}/artifacts/${encodeURIComponent(name)}`;
}

/** The service's answer to PUT, PATCH and GET of an artifact upload. */
export interface ArtifactUploadStatus {
  name: string;
  kind: ArtifactKind;
  contentType: string;
  /** Declared total size. */
  size: number;
  /** Bytes the service holds. */
  received: number;
  sha256: string;
  complete: boolean;
}

/** How a result names an artifact it has (RunResult.details.artifacts). */
export interface ArtifactRef {
  name: string;
  kind: ArtifactKind;
  contentType: string;
  size: number;
  sha256: string;
}

/** An artifact the agent left out, and why (RunResult.details.artifactNotes). */
export interface ArtifactNote {
  name: string;
  kind: ArtifactKind;
  /** Size on disk when known. */
  size?: number;
  /** For the user: what happened, and which setting governs it. */
  message: string;
}
