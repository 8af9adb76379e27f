/** Request and response schemas of /v1/maintenance-windows (the reference's MaintenanceWindow*). */
import { Type } from 'typebox';
import { IntegerId, Nullable, PageNumberQuery } from './schemas.ts';

const Tag = Type.String({ minLength: 1, maxLength: 255 });
const TagList = Type.Array(Tag, { maxItems: 100 });
/** An ISO 8601 date or date-time; stored as the UTC instant it names. */
const Instant = Type.String({ minLength: 10, maxLength: 40 });
const RepeatUnitSchema = Type.Enum(['DAY', 'WEEK', 'MONTH']);

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  tags: TagList,
  startsAt: Instant,
  endsAt: Instant,
  repeatInterval: Nullable(Type.Integer({ minimum: 1, maximum: 365 })),
  repeatUnit: Nullable(RepeatUnitSchema),
  repeatEndsAt: Nullable(Instant),
  /** Only UTC: the service schedules in UTC (see docs/api.md). */
  timezone: Nullable(Type.String({ maxLength: 64 })),
  description: Nullable(Type.String({ maxLength: 2000 })),
  pauseAllChecks: Type.Boolean(),
  silenceAlertsTags: TagList,
  silenceAllAlerts: Type.Boolean(),
  /** Its other fields only take effect with `enabled: true`, which the service refuses (status pages do not show windows). */
  statusPageVisibility: Type.Object({ enabled: Type.Optional(Type.Boolean()) }),
};

export const MaintenanceWindowCreateBody = Type.Object(
  {
    name: fields.name,
    startsAt: fields.startsAt,
    endsAt: fields.endsAt,
    repeatUnit: fields.repeatUnit,
    tags: Type.Optional(fields.tags),
    repeatInterval: Type.Optional(fields.repeatInterval),
    repeatEndsAt: Type.Optional(fields.repeatEndsAt),
    timezone: Type.Optional(fields.timezone),
    description: Type.Optional(fields.description),
    pauseAllChecks: Type.Optional(fields.pauseAllChecks),
    silenceAlertsTags: Type.Optional(fields.silenceAlertsTags),
    silenceAllAlerts: Type.Optional(fields.silenceAllAlerts),
    statusPageVisibility: Type.Optional(fields.statusPageVisibility),
  },
  { additionalProperties: false },
);

/** PUT is a partial update in the reference: omitted fields keep their value. */
export const MaintenanceWindowUpdateBody = Type.Partial(MaintenanceWindowCreateBody, { additionalProperties: false });

export const MaintenanceWindowResponse = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  tags: Type.Array(Type.String()),
  startsAt: Type.String(),
  endsAt: Type.String(),
  repeatInterval: Nullable(Type.Number()),
  repeatUnit: Nullable(RepeatUnitSchema),
  repeatEndsAt: Nullable(Type.String()),
  timezone: Nullable(Type.String()),
  description: Nullable(Type.String()),
  pauseAllChecks: Type.Boolean(),
  silenceAlertsTags: Type.Array(Type.String()),
  silenceAllAlerts: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

export const MaintenanceWindowIdParams = Type.Object({ id: IntegerId() });
export const MaintenanceWindowListQuery = Type.Object({ ...PageNumberQuery() });
