/** SUBSCRIPTION_CONFIRM_HOURS and SUBSCRIPTION_RESEND_MINUTES: defaults, and a ConfigError naming a bad value. */
import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.ts';
import { ConfigError } from '../../src/shared/errors.ts';

describe('subscription settings', () => {
  it('defaults to 48 hours to confirm and 10 minutes between resends, and reads both', () => {
    expect(loadServiceConfig({}).subscriptions).toEqual({ confirmHours: 48, resendMinutes: 10 });
    expect(
      loadServiceConfig({ SUBSCRIPTION_CONFIRM_HOURS: '6', SUBSCRIPTION_RESEND_MINUTES: '30' }).subscriptions,
    ).toEqual({
      confirmHours: 6,
      resendMinutes: 30,
    });
  });

  it.each([
    [
      'SUBSCRIPTION_CONFIRM_HOURS',
      'two days',
      /SUBSCRIPTION_CONFIRM_HOURS="two days" is not a whole number; use an integer from 1 to 720/,
    ],
    ['SUBSCRIPTION_CONFIRM_HOURS', '0', /SUBSCRIPTION_CONFIRM_HOURS=0 is out of range; use an integer from 1 to 720/],
    [
      'SUBSCRIPTION_RESEND_MINUTES',
      '5000',
      /SUBSCRIPTION_RESEND_MINUTES=5000 is out of range; use an integer from 1 to 1440/,
    ],
  ])('refuses %s=%s with a ConfigError naming it', (name, value, message) => {
    expect(() => loadServiceConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadServiceConfig({ [name]: value })).toThrow(message);
  });
});
