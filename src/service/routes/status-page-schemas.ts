/**
 * TypeBox schemas and views shared by the status page, service, incident, incident update and
 * subscription routes. Property names, enums, defaults and required lists are the reference's
 * (StatusPageV2*, IncidentsPaginatedResponse, StatusPageV2IncidentUpdate, Subscription, ...);
 * times are full ISO 8601 timestamps like every other resource of this API.
 */
import { Type } from 'typebox';
import {
  DEFAULT_THEMES,
  INCIDENT_SEVERITIES,
  INCIDENT_STATUSES,
  type IncidentRecord,
  type IncidentUpdateRecord,
  type SpService,
  type StatusPage,
  type StatusPageCard,
} from '../store/status-pages-types.ts';
import type { StatusPageKeyRecord } from '../store/status-page-web-types.ts';
import { BoundedInteger, MAX_INTEGER, Nullable } from './schemas.ts';

const Timestamp = Type.String({ format: 'date-time' });

export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  nextId: Type.Optional(Type.String({ minLength: 1 })),
});

// ---- services ----

export const ServiceSchema = Type.Object({
  name: Type.String(),
  id: Type.String(),
  accountId: Type.String(),
  created_at: Timestamp,
  updated_at: Nullable(Timestamp),
});

export function serviceView(service: SpService) {
  return {
    name: service.name,
    id: service.id,
    accountId: service.accountId,
    created_at: service.createdAt,
    updated_at: service.updatedAt,
  };
}

// ---- incident updates ----

export const IncidentStatusSchema = Type.Enum([...INCIDENT_STATUSES]);
export const IncidentSeveritySchema = Type.Enum([...INCIDENT_SEVERITIES]);

/** StatusPageV2IncidentUpdate: the body of POST and PUT of an update (id and created_at are ignored). */
export const IncidentUpdateBody = Type.Object({
  id: Type.Optional(Type.String()),
  description: Type.String({ minLength: 1 }),
  status: Type.Optional(IncidentStatusSchema),
  publicIncidentUpdateDate: Type.Optional(Type.String({ format: 'date-time' })),
  created_at: Type.Optional(Type.String()),
  notifySubscribers: Type.Boolean({ default: false }),
});

/** StatusPageV2IncidentUpdateWithId: every update the API returns. */
export const IncidentUpdateSchema = Type.Object({
  id: Type.String(),
  description: Type.String(),
  status: Type.Optional(IncidentStatusSchema),
  publicIncidentUpdateDate: Timestamp,
  notifySubscribers: Type.Boolean(),
  created_at: Timestamp,
});

export function incidentUpdateView(update: IncidentUpdateRecord) {
  return {
    id: update.id,
    description: update.description,
    ...(update.status === null ? {} : { status: update.status }),
    publicIncidentUpdateDate: update.publicIncidentUpdateDate,
    notifySubscribers: update.notifySubscribers,
    created_at: update.createdAt,
  };
}

// ---- incidents ----

/** IncidentService: the reference's request shape of an incident's service; only `id` is used. */
const IncidentServiceRef = Type.Object({
  name: Type.String(),
  id: Type.String({ minLength: 1 }),
  accountId: Type.String(),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Nullable(Type.String())),
});

/** StatusPageV2IncidentCommon: the PUT body; also the base of the create body. */
const incidentCommonProperties = {
  id: Type.Optional(Type.String()),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
  lastUpdateStatus: Type.Optional(IncidentStatusSchema),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  severity: IncidentSeveritySchema,
  services: Type.Array(IncidentServiceRef, { minItems: 1 }),
  // Derived from the updates; accepted so a GET body can be sent back, then ignored.
  duration: Type.Optional(Nullable(BoundedInteger(0))),
};

export const IncidentUpdateOnlyBody = Type.Object(incidentCommonProperties);

/** CreateStatusPageV2Incident: incidentUpdates is required and holds exactly one update. */
export const IncidentCreateBody = Type.Object({
  ...incidentCommonProperties,
  incidentUpdates: Type.Array(IncidentUpdateBody, { minItems: 1, maxItems: 1 }),
});

/** StatusPageV2Incident (also the list entries and the incidents embedded in status pages). */
export const IncidentSchema = Type.Object({
  name: Type.String(),
  severity: IncidentSeveritySchema,
  id: Type.String(),
  services: Type.Array(ServiceSchema),
  incidentUpdates: Type.Array(IncidentUpdateSchema),
  lastUpdateStatus: IncidentStatusSchema,
  duration: Nullable(Type.Integer()),
  created_at: Timestamp,
  updated_at: Type.Optional(Timestamp),
});

export function incidentView(incident: IncidentRecord) {
  return {
    name: incident.name,
    severity: incident.severity,
    id: incident.id,
    services: incident.services.map(serviceView),
    incidentUpdates: incident.updates.map(incidentUpdateView),
    lastUpdateStatus: incident.lastUpdateStatus,
    duration: incident.duration,
    created_at: incident.createdAt,
    // The reference's updated_at is not nullable: an incident never changed has none.
    ...(incident.updatedAt === null ? {} : { updated_at: incident.updatedAt }),
  };
}

export const IncidentsPage = Type.Object({
  length: Type.Integer(),
  entries: Type.Array(IncidentSchema),
  nextId: Nullable(Type.String()),
});

// ---- status pages ----

const HexColor = Type.String({ pattern: '^#([0-9A-F]{3}|[0-9A-F]{6})$' });
const ThemePalette = Type.Object({
  bodyBackgroundColor: HexColor,
  headerBackgroundColor: HexColor,
  headerFontColor: HexColor,
  titleFontColor: HexColor,
  bodyFontColor: HexColor,
  bodyFontColorMuted: HexColor,
  navigationFontColor: HexColor,
  linkFontColor: HexColor,
  cardBackgroundColor: HexColor,
  borderColor: HexColor,
  primaryButtonBackgroundColor: HexColor,
  primaryButtonFontColor: HexColor,
});
const ThemeColorsSchema = Nullable(Type.Object({ light: ThemePalette, dark: ThemePalette }));
const DefaultThemeSchema = Type.Enum([...DEFAULT_THEMES]);

/** StatusPageV2CardUpdate. */
const CardBody = Type.Object({
  id: Type.Optional(Type.String()),
  statusPageId: Type.Optional(Type.String()),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  services: Type.Optional(Type.Array(Type.Object({ id: Type.String({ minLength: 1 }) }))),
});

/** StatusPageV2PublicApiUpdate: the body of POST and PUT; PUT replaces every property. */
export const StatusPageBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  url: Type.String({ minLength: 1, maxLength: 255 }),
  customDomain: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  themeColors: Type.Optional(ThemeColorsSchema),
  logo: Type.Optional(Nullable(Type.String())),
  logoDark: Type.Optional(Nullable(Type.String())),
  redirectTo: Type.Optional(Nullable(Type.String())),
  favicon: Type.Optional(Nullable(Type.String())),
  defaultTheme: Type.Optional(DefaultThemeSchema),
  version: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: MAX_INTEGER }))),
  cards: Type.Array(CardBody),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  /** Outpost's: readable only with one of the page's keys (POST /v1/status-pages/{id}/keys). */
  isPrivate: Type.Optional(Type.Boolean()),
  /** Outpost's: no "Powered by Outpost" on the page. */
  whiteLabel: Type.Optional(Type.Boolean()),
});

const CardSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  services: Type.Array(ServiceSchema),
  created_at: Timestamp,
  updated_at: Nullable(Timestamp),
});

const statusPageCommon = {
  name: Type.String(),
  url: Type.String(),
  customDomain: Nullable(Type.String()),
  themeColors: ThemeColorsSchema,
  logo: Nullable(Type.String()),
  logoDark: Nullable(Type.String()),
  redirectTo: Nullable(Type.String()),
  favicon: Nullable(Type.String()),
  defaultTheme: DefaultThemeSchema,
  cards: Type.Array(CardSchema),
  version: Nullable(Type.Number()),
  id: Type.String(),
  isPrivate: Type.Boolean(),
  description: Nullable(Type.String()),
};

/** StatusPageV2WithId (POST, PUT) and StatusPageV2WithIdRead (GET one). */
export const StatusPageWithIdSchema = Type.Object({ ...statusPageCommon, whiteLabel: Type.Boolean() });

/** Model74: a status page key, only ever masked. */
export const StatusPageKeySchema = Type.Object({
  id: Type.String(),
  maskedKey: Type.String(),
  created_at: Timestamp,
  updated_at: Nullable(Timestamp),
});

/** StatusPageV2Read: the entries of the status page list. */
export const StatusPageReadSchema = Type.Object({
  ...statusPageCommon,
  accountId: Type.String(),
  created_at: Timestamp,
  updated_at: Nullable(Timestamp),
  incidents: Type.Array(IncidentSchema),
  keys: Type.Array(StatusPageKeySchema),
});

export const StatusPagesPage = Type.Object({
  length: Type.Integer(),
  entries: Type.Array(StatusPageReadSchema),
  nextId: Nullable(Type.String()),
});

function cardView(card: StatusPageCard) {
  return {
    id: card.id,
    name: card.name,
    services: card.services.map(serviceView),
    created_at: card.createdAt,
    updated_at: card.updatedAt,
  };
}

function statusPageCommonView(page: StatusPage) {
  return {
    name: page.name,
    url: page.url,
    customDomain: page.customDomain,
    themeColors: page.themeColors,
    logo: page.logo,
    logoDark: page.logoDark,
    redirectTo: page.redirectTo,
    favicon: page.favicon,
    defaultTheme: page.defaultTheme,
    cards: page.cards.map(cardView),
    version: page.version,
    id: page.id,
    isPrivate: page.isPrivate,
    description: page.description,
  };
}

export function statusPageWithIdView(page: StatusPage) {
  return { ...statusPageCommonView(page), whiteLabel: page.whiteLabel };
}

export function statusPageKeyView(key: StatusPageKeyRecord) {
  return { id: key.id, maskedKey: key.maskedKey, created_at: key.createdAt, updated_at: key.updatedAt };
}

export function statusPageReadView(page: StatusPage, incidents: IncidentRecord[], keys: StatusPageKeyRecord[]) {
  return {
    ...statusPageCommonView(page),
    accountId: page.accountId,
    created_at: page.createdAt,
    updated_at: page.updatedAt,
    incidents: incidents.map(incidentView),
    keys: keys.map(statusPageKeyView),
  };
}
