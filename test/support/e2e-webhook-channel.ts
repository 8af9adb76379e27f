/** `createWebhookChannel`: a signed WEBHOOK alert channel to a local receiver, made through the public API. */
import type { Api } from '../e2e/harness.ts';

export interface WebhookChannel {
  name: string;
  /** The receiver's base URL; alerts are POSTed to its /hook. */
  receiverUrl: string;
  /** The body, in the vendor's template variables. */
  template: string;
  webhookSecret: string;
  /** The checks whose alerts it gets. */
  checkIds: string[];
}

export function createWebhookChannel(api: Api, channel: WebhookChannel): Promise<{ id: number }> {
  return api.ok('POST', '/v1/alert-channels', {
    type: 'WEBHOOK',
    config: {
      name: channel.name,
      url: `${channel.receiverUrl}/hook`,
      method: 'POST',
      template: channel.template,
      webhookSecret: channel.webhookSecret,
      headers: [],
      queryParameters: [],
    },
    subscriptions: channel.checkIds.map((checkId) => ({ checkId, activated: true })),
  });
}
