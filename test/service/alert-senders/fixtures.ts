/**
 * What the sender tests share: an alert message with every field set, and a SendContext whose
 * dispatcher is the real outbound guard, allowing 127.0.0.1 so the loopback receivers are reachable.
 */
import type { Dispatcher } from 'undici';
import { onTestFinished } from 'vitest';
import type { AlertChannelDefinition, AlertChannelType } from '../../../src/service/alert-channels/channel-config.ts';
import type {
  AlertMessage,
  MailTransport,
  ProviderEndpoints,
  SendContext,
} from '../../../src/service/notify/channels/types.ts';
import { loadOutboundConfig } from '../../../src/service/outbound/config.ts';
import { createOutboundDispatcher } from '../../../src/service/outbound/dispatcher.ts';
import { OutboundPolicy } from '../../../src/service/outbound/policy.ts';

/** 2026-07-24T10:00:00Z: the time every test's render and signature are made at. */
export const NOW = Date.UTC(2026, 6, 24, 10, 0, 0);

export function alertMessage(overrides: Partial<AlertMessage> = {}): AlertMessage {
  return {
    notificationId: 'ntf_0123456789',
    alertId: 42,
    alertType: 'ALERT_FAILURE',
    accountId: 'acc_1',
    checkId: '6f1f2c9e-8a57-4c7e-9d0e-3b1a1c2d3e4f',
    checkName: 'Checkout API',
    checkType: 'API',
    groupName: 'Payments',
    tags: ['team:payments', 'env=production', 'P1'],
    runLocation: 'eu-west-1',
    responseTime: 1234,
    error: 'expected status 200, got 500',
    statusCode: '500',
    resultId: '9a8b7c6d-0000-4000-8000-000000000001',
    resultUrl:
      'https://outpost.example/v1/check-results/6f1f2c9e-8a57-4c7e-9d0e-3b1a1c2d3e4f/9a8b7c6d-0000-4000-8000-000000000001',
    startedAt: '2026-07-24T09:55:00.000Z',
    createdAt: '2026-07-24T09:59:30.000Z',
    sslDaysRemaining: null,
    incidentKey: 'outpost-check-6f1f2c9e-8a57-4c7e-9d0e-3b1a1c2d3e4f',
    ...overrides,
  };
}

export function channel<T extends AlertChannelType>(
  type: T,
  config: Extract<AlertChannelDefinition, { type: T }>['config'],
) {
  return { type, config } as Extract<AlertChannelDefinition, { type: T }>;
}

/** The outbound guard as the service builds it; `allow` null refuses loopback as production does. */
export function guardedDispatcher(allow: string | null = '127.0.0.1'): Dispatcher {
  const policy = new OutboundPolicy(loadOutboundConfig(allow === null ? {} : { OUTBOUND_ALLOW: allow }));
  const dispatcher = createOutboundDispatcher(policy, { connectTimeoutMs: 2_000 });
  onTestFinished(() => dispatcher.close());
  return dispatcher;
}

export function sendContext(
  opts: {
    providers?: Partial<ProviderEndpoints>;
    mail?: MailTransport | null;
    dispatcher?: Dispatcher;
    timeoutMs?: number;
  } = {},
): SendContext {
  return {
    dispatcher: opts.dispatcher ?? guardedDispatcher(),
    timeoutMs: opts.timeoutMs ?? 5_000,
    providers: {
      pagerDutyEventsUrl: 'http://127.0.0.1:9/v2/enqueue',
      opsgenieApiUrl: { US: 'http://127.0.0.1:9', EU: 'http://127.0.0.1:9' },
      ...opts.providers,
    },
    mail: opts.mail ?? null,
    now: () => NOW,
  };
}
