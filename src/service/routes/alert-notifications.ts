/**
 * GET /v1/alert-notifications: every notification of an alert to a channel, with where its delivery
 * stands (IN_PROGRESS while queued or being retried, SUCCESS, FAILURE) and what the receiver
 * answered, newest first, within a window of at most 24 hours given as UNIX seconds.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ALERT_CHANNEL_TYPES } from '../alert-channels/channel-config.ts';
import type { AlertNotificationRecord, AlertNotificationState } from '../store/alert-notification-types.ts';
import type { Store } from '../store/store.ts';
import { alertWindow, WindowQuery } from './check-alerts.ts';
import { commonErrors, IntegerId, Nullable, PageNumberQuery } from './schemas.ts';

/** The widest window the reference serves for notifications. */
export const NOTIFICATION_WINDOW_SECONDS = 24 * 60 * 60;

const Query = Type.Object({
  ...PageNumberQuery(10),
  ...WindowQuery(),
  alertChannelId: Type.Optional(IntegerId()),
  hasFailures: Type.Optional(Type.Boolean()),
});

const STATUS: Record<AlertNotificationState, 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE'> = {
  pending: 'IN_PROGRESS',
  delivered: 'SUCCESS',
  failed: 'FAILURE',
};

const AlertNotificationSchema = Type.Object({
  id: Type.String(),
  type: Type.Enum([...ALERT_CHANNEL_TYPES]),
  status: Type.Enum(['IN_PROGRESS', 'SUCCESS', 'FAILURE']),
  alertConfig: Type.Object({}, { additionalProperties: true }),
  notificationResult: Nullable(Type.String()),
  timestamp: Nullable(Type.String({ format: 'date-time' })),
  checkType: Type.String(),
  checkId: Type.String(),
  checkAlertId: Type.String(),
  alertChannelId: IntegerId(),
  checkResultId: Type.String(),
  /** Outpost extensions: how many attempts were made, and the last one's error (null after a success). */
  attempts: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  lastError: Nullable(Type.String()),
});

const notificationView = (n: AlertNotificationRecord): Static<typeof AlertNotificationSchema> => ({
  id: n.id,
  type: n.channelType,
  status: STATUS[n.state],
  alertConfig: n.alertConfig,
  // What the receiver answered; for a failure without an answer, why it failed.
  notificationResult: n.notificationResult ?? n.lastError,
  timestamp: n.sentAt ?? n.lastAttemptAt,
  checkType: n.message.checkType,
  checkId: n.checkId,
  checkAlertId: String(n.checkAlertId),
  alertChannelId: n.alertChannelId,
  checkResultId: n.message.resultId,
  attempts: n.attempts,
  lastError: n.state === 'delivered' ? null : n.lastError,
});

export const alertNotificationRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const schema = { querystring: Query, response: { 200: Type.Array(AlertNotificationSchema), ...commonErrors } };

  app.get('/v1/alert-notifications', { schema }, async (request) => {
    const { limit, page, from, to, alertChannelId, hasFailures } = request.query;
    const window = alertWindow(from, to, Date.now(), NOTIFICATION_WINDOW_SECONDS);
    const rows = await store.alertNotifications.list(request.account.id, {
      ...window,
      alertChannelId,
      hasFailures,
      limit,
      page,
    });
    return rows.map(notificationView);
  });
};
