/**
 * The confirm and unsubscribe links of subscriber messages. They live on PUBLIC_URL (not on a page's
 * custom domain): one address for every page, and the one the operator controls.
 */
export interface SubscriptionLinks {
  confirm(token: string): string;
  unsubscribe(token: string): string;
}

export const CONFIRM_PATH = '/subscriptions/confirm/';
export const UNSUBSCRIBE_PATH = '/subscriptions/unsubscribe/';

export function subscriptionLinks(publicUrl: URL): SubscriptionLinks {
  const base = publicUrl.href.replace(/\/$/, '');
  return {
    confirm: (token) => `${base}${CONFIRM_PATH}${token}`,
    unsubscribe: (token) => `${base}${UNSUBSCRIBE_PATH}${token}`,
  };
}
