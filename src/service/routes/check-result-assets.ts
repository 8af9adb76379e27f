/**
 * Artifacts of a check result, for the account that owns it:
 *  - GET /v1/check-results/{checkId}/{checkResultId}/assets   the reference's AssetManifest;
 *  - GET /v1/check-results/{checkId}/{checkResultId}/assets/{name}   the bytes (our download URL).
 * Another account's result, or an artifact not (yet) completely uploaded, is 404.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { ArtifactKind } from '../../shared/artifacts.ts';
import type { ArtifactService } from '../artifacts/service.ts';
import type { ArtifactRecord } from '../store/artifact-types.ts';
import { commonErrors } from './schemas.ts';

/** The reference's normalized asset types; our `other` is its `file`. */
const ASSET_TYPES = ['log', 'trace', 'video', 'screenshot', 'pcap', 'report', 'file'] as const;
type AssetType = (typeof ASSET_TYPES)[number];

function assetTypeOf(kind: ArtifactKind): AssetType {
  return kind === 'other' ? 'file' : kind;
}

const Params = Type.Object({ checkId: Type.String({ minLength: 1 }), checkResultId: Type.String({ minLength: 1 }) });
const Query = Type.Object({
  type: Type.Optional(Type.Array(Type.Enum([...ASSET_TYPES]))),
  name: Type.Optional(Type.String({ maxLength: 200 })),
});

const AssetManifestEntry = Type.Object({
  type: Type.Enum([...ASSET_TYPES]),
  name: Type.String({ minLength: 1 }),
  url: Type.String({ format: 'uri' }),
  contentType: Type.String({ minLength: 1 }),
  source: Type.Object({
    type: Type.Enum(['check-result', 'test-session-result']),
    checkId: Type.String(),
    checkName: Type.String(),
    checkType: Type.String(),
    resultId: Type.String(),
  }),
});
const AssetManifest = Type.Object({ assets: Type.Array(AssetManifestEntry), truncated: Type.Boolean() });

/**
 * The reference's `name` filter: a glob matched case-insensitively, `*` any run of characters and
 * `?` one. Artifact names have no path separators, so nothing more is needed.
 */
export function globMatcher(pattern: string): (name: string) => boolean {
  const source = [...pattern]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const re = new RegExp(`^${source}$`, 'i');
  return (name) => re.test(name);
}

export function assetUrl(publicUrl: URL, checkId: string, resultId: string, name: string): string {
  const base = publicUrl.href.endsWith('/') ? publicUrl.href : `${publicUrl.href}/`;
  return new URL(
    `v1/check-results/${encodeURIComponent(checkId)}/${encodeURIComponent(resultId)}/assets/${encodeURIComponent(name)}`,
    base,
  ).toString();
}

export const checkResultAssetRoutes: FastifyPluginAsync<{ artifacts: ArtifactService; publicUrl: URL }> = async (
  fastify,
  { artifacts, publicUrl },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/check-results/:checkId/:checkResultId/assets',
    { schema: { params: Params, querystring: Query, response: { 200: AssetManifest, ...commonErrors } } },
    async (request) => {
      const { checkId, checkResultId } = request.params;
      const { ref, artifacts: records } = await artifacts.forResult(request.account.id, checkId, checkResultId);
      const types = request.query.type;
      // "Empty patterns are ignored", as the reference says.
      const matches = request.query.name ? globMatcher(request.query.name) : () => true;
      const wanted = records.filter(
        (r: ArtifactRecord) => (!types || types.includes(assetTypeOf(r.kind))) && matches(r.name),
      );
      return {
        assets: wanted.map((r) => ({
          type: assetTypeOf(r.kind),
          name: r.name,
          url: assetUrl(publicUrl, ref.checkId, ref.resultId, r.name),
          contentType: r.contentType,
          source: {
            type: 'check-result' as const,
            checkId: ref.checkId,
            checkName: ref.checkName,
            checkType: ref.checkType,
            resultId: ref.resultId,
          },
        })),
        // Artifacts are stored one by one, never as an archive to list: nothing is ever left out.
        truncated: false,
      };
    },
  );

  app.get(
    '/v1/check-results/:checkId/:checkResultId/assets/:name',
    { schema: { params: Type.Object({ ...Params.properties, name: Type.String({ minLength: 1, maxLength: 300 }) }) } },
    async (request, reply) => {
      const { checkId, checkResultId, name } = request.params;
      const { record, body } = await artifacts.download(request.account.id, checkId, checkResultId, name);
      return (
        reply
          .header('content-type', record.contentType)
          .header('content-length', String(record.size))
          .header('content-disposition', `attachment; filename="${record.name}"`)
          .header('x-artifact-sha256', record.sha256)
          // The bytes come from user code (HTML reports, SVG screenshots): never let a browser run
          // them with this origin's privileges.
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "sandbox; default-src 'none'")
          .send(body)
      );
    },
  );
};
