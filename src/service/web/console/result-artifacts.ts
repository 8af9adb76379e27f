/**
 * A result's artifacts for the console session that owns them, at a same-origin URL: what the
 * result page's <img> and <video> load and what the trace viewer's service worker fetches (the
 * API's download URL wants an API key, which a browser session does not carry). Another account's
 * artifact, or one not completely uploaded, is the plain 404 page.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../http/errors.ts';
import type { WebDeps } from '../deps.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { byteRangeOf, RangeNotSatisfiableError } from './byte-range.ts';

/** The console's URL of one artifact of a result. */
export function consoleArtifactUrl(checkId: string, resultId: string, name: string): string {
  return `/app/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(resultId)}/artifacts/${encodeURIComponent(name)}`;
}

interface ArtifactParams {
  checkId: string;
  resultId: string;
  name: string;
}

export async function resultArtifactRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  // Screenshots, videos and zipped traces are compressed already, and a compressed 206 would not
  // match its Content-Range.
  app.get<{ Params: ArtifactParams }>(
    '/app/checks/:checkId/results/:resultId/artifacts/:name',
    { compress: false },
    async (request, reply) => {
      const { checkId, resultId, name } = request.params;
      let found: Awaited<ReturnType<typeof deps.artifacts.download>>;
      try {
        found = await deps.artifacts.download(request.consoleAccountId, checkId, resultId, name, (r) =>
          byteRangeOf(request.headers.range, r.size),
        );
      } catch (err) {
        if (err instanceof NotFoundError) return sendNotFoundPage(reply, 'artifact');
        if (err instanceof RangeNotSatisfiableError)
          return reply.status(416).header('content-range', `bytes */${err.size}`).send();
        throw err;
      }
      const { record, body, range } = found;
      if (range) reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${record.size}`);
      return (
        reply
          .header('content-type', record.contentType)
          .header('content-length', String(range ? range.end - range.start + 1 : record.size))
          .header('accept-ranges', 'bytes')
          .header('content-disposition', `inline; filename="${record.name}"`)
          .header('cache-control', 'private, max-age=300')
          // The bytes come from user code (HTML reports, SVG screenshots): opened on their own, they
          // run nothing with this origin's privileges.
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "sandbox; default-src 'none'")
          .send(body)
      );
    },
  );
}
