/**
 * Dashboards: POST/GET /v1/dashboards and GET/PUT/DELETE /v1/dashboards/{dashboardId}, with every
 * property of the reference's DashboardCreate (plus `description`, which the spec lists).
 *
 * customUrl and customDomain are unique across all accounts, in any letter case: the store keeps a
 * normalized copy of each under a UNIQUE index, so the database decides between racing requests and
 * the loser gets 409. The pages themselves are src/service/web/dashboards/. A private dashboard gets a
 * viewer key, whose raw value is returned once, by the request that made it, and masked ever after
 * (see docs/api.md "Dashboards").
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { type Mode, prop } from '../checks/common-check-schema.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { DashboardInput, StoredDashboard } from '../store/heartbeat-dashboard-types.ts';
import type { Store } from '../store/store.ts';
import { IssuedKeySchema, issuedKeyView } from './private-locations.ts';
import { ApiErrorSchema, commonErrors, NoContent, Nullable, PageNumberQuery } from './schemas.ts';

export const DASHBOARD_WIDTHS = ['FULL', '960PX'] as const;
export const REFRESH_RATES = [60, 300, 600] as const;
export const PAGINATION_RATES = [30, 60, 300] as const;

/** A DNS label: what a subdomain under the service's own domain can be ("" means none). */
const CUSTOM_URL_PATTERN = '^(|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)$';
/** logo, favicon, link: an http(s) URL, or "" (the reference's `anyOf [uri, "", null]`). */
const URL_OR_EMPTY_PATTERN = '^(|https?://[^\\s]+)$';

function dashboardProperties(mode: Mode) {
  const urlOrEmpty = () => Type.Optional(Nullable(Type.String({ pattern: URL_OR_EMPTY_PATTERN, maxLength: 2048 })));
  const bool = (fallback: boolean) => prop(mode, (o) => Type.Boolean(o), fallback);
  return {
    customUrl: Type.Optional(Nullable(Type.String({ pattern: CUSTOM_URL_PATTERN }))),
    customDomain: Type.Optional(Nullable(Type.String({ maxLength: 253 + 8 }))),
    logo: urlOrEmpty(),
    favicon: urlOrEmpty(),
    link: urlOrEmpty(),
    header: mode === 'create' ? Type.String() : Type.Optional(Type.String()),
    description: Type.Optional(Nullable(Type.String())),
    width: prop(mode, (o) => Type.Enum([...DASHBOARD_WIDTHS], o), 'FULL'),
    refreshRate: prop(mode, (o) => Type.Enum([...REFRESH_RATES], o), 60),
    paginate: bool(true),
    paginationRate: prop(mode, (o) => Type.Enum([...PAGINATION_RATES], o), 60),
    sortByStatus: bool(false),
    checksPerPage: prop(mode, (o) => Nullable(Type.Integer({ minimum: 1, maximum: 20 }), o), 15),
    useTagsAndOperator: prop(mode, (o) => Nullable(Type.Boolean(), o), false),
    hideTags: bool(false),
    enableIncidents: bool(false),
    expandChecks: bool(false),
    tags: prop(mode, (o) => Type.Array(Type.String(), o), []),
    showHeader: bool(true),
    showCheckRunLinks: bool(false),
    showGroupNames: bool(true),
    customCSS: prop(mode, (o) => Nullable(Type.String(), o), ''),
    isPrivate: bool(false),
    showP95: bool(true),
    showP99: bool(true),
    // Accepted so reference clients can send it back, but ignored: keys are made by the service.
    keys: Type.Optional(Type.Array(Type.Unknown())),
  };
}

export const DashboardCreateBody = Type.Object(dashboardProperties('create'), { additionalProperties: false });
export const DashboardUpdateBody = Type.Object(dashboardProperties('update'), { additionalProperties: false });
export type DashboardBody = Static<typeof DashboardCreateBody>;

/** Every stored property as returned (the reference's Dashboard); keys get their own response shape. */
const { keys: _inputKeys, ...responseProperties } = dashboardProperties('create');

export const DashboardResponse = Type.Object({
  id: Type.Number(),
  dashboardId: Type.String(),
  ...responseProperties,
  // The viewer opens a private dashboard with the key's raw value.
  keys: Type.Array(IssuedKeySchema),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

const DashboardParams = Type.Object({ dashboardId: Type.String({ minLength: 1 }) });
const GetQuery = Type.Object({ type: Type.Optional(Type.Enum(['customUrl', 'customDomain'])) });
const ListQuery = Type.Object({
  ...PageNumberQuery(),
});

/** The customUrl uniqueness key: lower-cased; null when unset or "". */
export function customUrlKey(value: string | null | undefined): string | null {
  return value ? value.toLowerCase() : null;
}

/**
 * The customDomain uniqueness key: its host, lower-cased, so `Status.Example.com` and
 * `https://status.example.com/` are the same domain. Null when unset or "".
 */
export function customDomainKey(value: string | null | undefined): string | null {
  if (!value) return null;
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `https://${value}`).hostname;
  } catch {
    throw new BadRequestError('body/customDomain must be a domain name such as status.example.com, or a URL of one');
  }
  if (!host.includes('.'))
    throw new BadRequestError('body/customDomain must be a domain name such as status.example.com, or a URL of one');
  return host.toLowerCase();
}

const notFound = () => new NotFoundError('Dashboard not found');

/** The numeric id in a path, or undefined when the path cannot be one (then it is simply not found). */
function parseId(dashboardId: string): number | undefined {
  return /^[1-9]\d{0,15}$/.test(dashboardId) ? Number(dashboardId) : undefined;
}

function toInput(body: DashboardBody): DashboardInput {
  const { keys: _ignored, ...stored } = body;
  return {
    body: { ...stored, customUrl: body.customUrl ?? null, customDomain: body.customDomain ?? null },
    customUrlKey: customUrlKey(body.customUrl),
    customDomainKey: customDomainKey(body.customDomain),
    isPrivate: body.isPrivate,
  };
}

export function dashboardView(d: StoredDashboard): Static<typeof DashboardResponse> {
  const body = d.body as DashboardBody;
  return {
    id: d.id,
    dashboardId: String(d.id),
    ...body,
    customUrl: body.customUrl ?? null,
    customDomain: body.customDomain ?? null,
    logo: body.logo ?? null,
    favicon: body.favicon ?? null,
    link: body.link ?? null,
    description: body.description ?? null,
    keys: d.keys.map((k) => issuedKeyView(k, d.newKey?.id === k.id ? d.newKey.rawKey : undefined)),
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  } as Static<typeof DashboardResponse>;
}

export const dashboardRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const conflict = { 409: ApiErrorSchema };

  app.post(
    '/v1/dashboards',
    { schema: { body: DashboardCreateBody, response: { 201: DashboardResponse, ...conflict, ...commonErrors } } },
    async (request, reply) => {
      const dashboard = await store.dashboards.create(request.account.id, toInput(request.body));
      return reply.status(201).send(dashboardView(dashboard));
    },
  );

  app.get(
    '/v1/dashboards',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(DashboardResponse), ...commonErrors } } },
    async (request) => (await store.dashboards.list(request.account.id, request.query)).map(dashboardView),
  );

  app.get(
    '/v1/dashboards/:dashboardId',
    {
      schema: { params: DashboardParams, querystring: GetQuery, response: { 200: DashboardResponse, ...commonErrors } },
    },
    async (request) => {
      const accountId = request.account.id;
      const { dashboardId } = request.params;
      const { type } = request.query;
      // ?type=customUrl|customDomain: the path segment is that address instead of the id.
      const dashboard =
        type === 'customUrl'
          ? await store.dashboards.getByAddress(accountId, type, customUrlKey(dashboardId) ?? '')
          : type === 'customDomain'
            ? await store.dashboards.getByAddress(accountId, type, customDomainKey(dashboardId) ?? '')
            : await lookup(accountId, dashboardId);
      if (!dashboard) throw notFound();
      return dashboardView(dashboard);
    },
  );

  async function lookup(accountId: string, dashboardId: string) {
    const id = parseId(dashboardId);
    return id === undefined ? undefined : store.dashboards.get(accountId, id);
  }

  app.put(
    '/v1/dashboards/:dashboardId',
    {
      schema: {
        params: DashboardParams,
        body: DashboardUpdateBody,
        response: { 200: DashboardResponse, ...conflict, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const existing = await lookup(accountId, request.params.dashboardId);
      if (!existing) throw notFound();
      // PUT changes only the properties it carries.
      const merged = { ...(existing.body as DashboardBody), ...request.body } as DashboardBody;
      const updated = await store.dashboards.update(accountId, existing.id, toInput(merged));
      if (!updated) throw notFound();
      return dashboardView(updated);
    },
  );

  app.delete(
    '/v1/dashboards/:dashboardId',
    { schema: { params: DashboardParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const id = parseId(request.params.dashboardId);
      if (id === undefined || !(await store.dashboards.delete(request.account.id, id))) throw notFound();
      return reply.status(204).send(null);
    },
  );
};
