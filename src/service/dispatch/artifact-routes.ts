/**
 * Artifact HTTP routes, registered by app.ts next to the agent API:
 *  - agent side (location key): HEAD/GET, PUT and PATCH /agent/v1/runs/{runId}/artifacts/{name}
 *    (docs/protocol.md "Artifacts");
 *  - public side (account auth): the asset manifest and downloads (routes/check-result-assets.ts).
 * The bodies of uploads are never parsed or buffered: they stream from the socket to the store.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ARTIFACT_HEADERS, type ArtifactUploadStatus } from '../../shared/artifacts.ts';
import type { Log } from '../../shared/log.ts';
import { AGENT_API_PREFIX } from '../../shared/protocol.ts';
import { LocalDiskArtifactStore } from '../artifacts/local-disk-store.ts';
import {
  ArtifactBodyTooLongError,
  ArtifactService,
  OffsetMismatchError,
  parseOffsetHeader,
  parseStartHeaders,
} from '../artifacts/service.ts';
import type { ArtifactConfig } from '../artifacts/config.ts';
import { useAccountAuth } from '../http/auth.ts';
import { BadRequestError, UnauthorizedError } from '../http/errors.ts';
import { checkResultAssetRoutes } from '../routes/check-result-assets.ts';
import type { PrivateLocation, Store } from '../store/store.ts';

export interface ArtifactApiOptions {
  artifacts: ArtifactService;
  store: Store;
  publicUrl: URL;
}

/** The service's artifact component over the local disk under config.dir. */
export function createArtifactService(
  store: Store,
  config: ArtifactConfig,
  log: Pick<Log, 'info' | 'warn' | 'error'>,
): ArtifactService {
  return new ArtifactService({ store, blobs: new LocalDiskArtifactStore(config.dir), config, log });
}

const UPLOAD_PATH = `${AGENT_API_PREFIX}/runs/:runId/artifacts/:name`;

const KEY_REJECTED =
  'The private location key was not accepted: it is unknown or was deleted. Set API_KEY to a current key of the location (pl_...)';

const locations = new WeakMap<FastifyRequest, PrivateLocation>();

function locationOf(request: FastifyRequest): PrivateLocation {
  const location = locations.get(request);
  if (!location) throw new Error('artifact route without the location-key hook');
  return location;
}

interface UploadParams {
  runId: string;
  name: string;
}

function answer(reply: FastifyReply, status: ArtifactUploadStatus): ArtifactUploadStatus {
  void reply
    .header(ARTIFACT_HEADERS.offset, String(status.received))
    .header(ARTIFACT_HEADERS.length, String(status.size));
  return status;
}

/** A refusal that knows the bytes the service holds says so in upload-offset, as HEAD would. */
function heldHeader(reply: FastifyReply, err: unknown): void {
  if ((err instanceof OffsetMismatchError || err instanceof ArtifactBodyTooLongError) && err.held !== undefined) {
    void reply.header(ARTIFACT_HEADERS.offset, String(err.held));
  }
}

/** When the agent went away mid-body there is nobody to answer; a 400 to a dead socket is harmless. */
function interrupted(request: FastifyRequest, err: unknown): never {
  // (A body read to its end is destroyed too, by autoDestroy: `complete` tells the two apart.)
  if (request.raw.readableAborted || (request.raw.destroyed && !request.raw.complete)) {
    throw new BadRequestError('the upload was interrupted; ask HEAD for the offset and continue with PATCH');
  }
  throw err;
}

/** Answers a PUT or PATCH with the upload's state once `read` has taken the body in. */
async function answerBodyRead(
  request: FastifyRequest,
  reply: FastifyReply,
  read: () => Promise<ArtifactUploadStatus>,
): Promise<ArtifactUploadStatus> {
  let status: ArtifactUploadStatus;
  try {
    status = await read();
  } catch (err) {
    heldHeader(reply, err);
    interrupted(request, err);
  }
  return answer(reply, status);
}

const uploadRoutes: FastifyPluginAsync<ArtifactApiOptions> = async (fastify, { artifacts, store }) => {
  fastify.addHook('onRequest', async (request) => {
    const match = request.headers.authorization ? /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization) : null;
    if (!match?.[1])
      throw new UnauthorizedError(`Missing private location key: send "Authorization: Bearer pl_...". ${KEY_REJECTED}`);
    const location = await store.locations.findByKey(match[1]);
    if (!location) throw new UnauthorizedError(KEY_REJECTED);
    locations.set(request, location);
  });
  // Any content type (it is the artifact's own): leave the body unread for the handler to stream.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  // Answered before the body was read (refused, or already complete): close the connection rather
  // than let Node read and discard up to 150 MB to keep it alive.
  fastify.addHook('onSend', async (request, reply) => {
    const method = request.raw.method;
    if ((method === 'PUT' || method === 'PATCH') && !request.raw.complete) void reply.header('connection', 'close');
  });

  // GET, and HEAD (which Fastify derives from it): the upload's state, the offset in a header.
  fastify.get<{ Params: UploadParams }>(UPLOAD_PATH, async (request, reply) => {
    const { runId, name } = request.params;
    return answer(reply, await artifacts.status(locationOf(request), runId, name));
  });

  fastify.put<{ Params: UploadParams }>(UPLOAD_PATH, async (request, reply) => {
    const { runId, name } = request.params;
    const upload = parseStartHeaders(request.headers, artifacts.config.maxBytes);
    return answerBodyRead(request, reply, () => artifacts.start(locationOf(request), runId, name, upload, request.raw));
  });

  fastify.patch<{ Params: UploadParams }>(UPLOAD_PATH, async (request, reply) => {
    const { runId, name } = request.params;
    const offset = parseOffsetHeader(request.headers);
    return answerBodyRead(request, reply, () =>
      artifacts.append(locationOf(request), runId, name, offset, request.raw),
    );
  });
};

const publicRoutes: FastifyPluginAsync<ArtifactApiOptions> = async (fastify, opts) => {
  useAccountAuth(fastify, opts.store);
  await fastify.register(checkResultAssetRoutes, { artifacts: opts.artifacts, publicUrl: opts.publicUrl });
};

/** Upload routes for agents and the asset routes of the public API; sweeps retention while the app runs. */
export const artifactApi: FastifyPluginAsync<ArtifactApiOptions> = async (app, opts) => {
  await app.register(uploadRoutes, opts);
  await app.register(publicRoutes, opts);
  app.addHook('onReady', async () => opts.artifacts.startSweeping());
  app.addHook('onClose', async () => opts.artifacts.stopSweeping());
};
