/**
 * Client certificates (/v1/client-certificates): PEM certificate and key pairs an account's checks
 * present for mutual TLS, each for a host pattern (docs/api.md "Client certificates"). The key and
 * passphrase are sealed at rest and never returned; certificates cannot be edited, only added and
 * deleted (as in the reference). Deleting one still in use is allowed: checks that need it fail.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { assertClientCertificateUsable, PEM_TEXT_MAX } from '../checks/client-tls.ts';
import { NotFoundError } from '../http/errors.ts';
import type { ClientCertificate } from '../store/client-certificate-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, IdParams, NoContent, Nullable } from './schemas.ts';

const Pem = Type.String({ minLength: 1, maxLength: PEM_TEXT_MAX });

/** ClientCertificateCreate. The reference marks only host and cert required; a key is needed for mTLS, so it is required here. */
const ClientCertificateBody = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 255 }),
    cert: Pem,
    key: Pem,
    ca: Type.Optional(Nullable(Type.String({ maxLength: PEM_TEXT_MAX }))),
    passphrase: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
  },
  { additionalProperties: false },
);

/** ClientCertificateRetrieve: never the key or the passphrase. */
const ClientCertificateResponse = Type.Object({
  id: Type.String(),
  host: Type.String(),
  cert: Type.String(),
  ca: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
});

const notFound = () => new NotFoundError('Client certificate not found');

function certificateView(c: ClientCertificate): Static<typeof ClientCertificateResponse> {
  return { id: c.id, host: c.host, cert: c.cert, ca: c.ca, created_at: c.createdAt };
}

export const clientCertificateRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const repo = store.clientCertificates;

  app.get(
    '/v1/client-certificates',
    { schema: { response: { 200: Type.Array(ClientCertificateResponse), ...commonErrors } } },
    async (request) => (await repo.list(request.account.id)).map(certificateView),
  );

  app.post(
    '/v1/client-certificates',
    { schema: { body: ClientCertificateBody, response: { 201: ClientCertificateResponse, ...commonErrors } } },
    async (request, reply) => {
      const b = request.body;
      const input = {
        host: b.host.trim(),
        cert: b.cert,
        key: b.key,
        ca: b.ca || null,
        passphrase: b.passphrase || null,
      };
      assertClientCertificateUsable(input);
      return reply.status(201).send(certificateView(await repo.create(request.account.id, input)));
    },
  );

  app.get(
    '/v1/client-certificates/:id',
    { schema: { params: IdParams, response: { 200: ClientCertificateResponse, ...commonErrors } } },
    async (request) => {
      const found = await repo.get(request.account.id, request.params.id);
      if (!found) throw notFound();
      return certificateView(found);
    },
  );

  app.delete(
    '/v1/client-certificates/:id',
    { schema: { params: IdParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await repo.delete(request.account.id, request.params.id))) throw notFound();
      return reply.status(204).send(null);
    },
  );
};
