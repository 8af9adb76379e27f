/**
 * The alert settings of checks and groups (the reference's ChecksV1AlertSettings and
 * CheckGroupAlertSettings, the same shape): how many failed runs or minutes of failing raise an
 * alert, the share of locations that must fail, and reminders. src/service/alerting/ applies them.
 */
import { Type } from 'typebox';

export const AlertSettingsIn = Type.Object(
  {
    escalationType: Type.Enum(['RUN_BASED', 'TIME_BASED'], { default: 'RUN_BASED' }),
    runBasedEscalation: Type.Optional(
      Type.Object({ failedRunThreshold: Type.Enum([1, 2, 3, 4, 5], { default: 1 }) }, { additionalProperties: false }),
    ),
    timeBasedEscalation: Type.Optional(
      Type.Object(
        { minutesFailingThreshold: Type.Enum([5, 10, 15, 30], { default: 5 }) },
        { additionalProperties: false },
      ),
    ),
    reminders: Type.Optional(
      Type.Object(
        {
          amount: Type.Enum([0, 1, 2, 3, 4, 5, 100000], { default: 0 }),
          interval: Type.Enum([1, 2, 3, 4, 5, 10, 15, 30], { default: 5 }),
        },
        { additionalProperties: false },
      ),
    ),
    parallelRunFailureThreshold: Type.Optional(
      Type.Object(
        {
          enabled: Type.Boolean({ default: false }),
          percentage: Type.Enum([10, 20, 30, 40, 50, 60, 70, 80, 90, 100], { default: 10 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** The reference's default alert settings, for checks and groups alike. */
export const DEFAULT_ALERT_SETTINGS = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
} as const;
