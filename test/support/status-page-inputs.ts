/** Inputs for store-level tests of status pages, incidents and subscriptions (the store's own shapes, not the API's). */
import type {
  ConfirmationPolicy,
  IncidentUpdateInput,
  StatusPageCardInput,
  StatusPageInput,
} from '../../src/service/store/status-pages-types.ts';

export function pageInput(
  url: string,
  cards: StatusPageCardInput[],
  fields: Partial<StatusPageInput> = {},
): StatusPageInput {
  return {
    name: `Page ${url}`,
    url,
    customDomain: null,
    themeColors: null,
    logo: null,
    logoDark: null,
    redirectTo: null,
    favicon: null,
    defaultTheme: 'AUTO',
    version: null,
    description: null,
    isPrivate: false,
    whiteLabel: false,
    cards,
    ...fields,
  };
}

export function updateInput(
  publicIncidentUpdateDate: string,
  fields: Partial<IncidentUpdateInput> = {},
): IncidentUpdateInput {
  return {
    description: 'Looking into it',
    status: null,
    publicIncidentUpdateDate,
    notifySubscribers: false,
    ...fields,
  };
}

/** A confirmation policy at `now`: links live an hour, a confirmation may be re-sent after ten minutes. */
export function policyAt(now: Date): ConfirmationPolicy {
  return { now, expiresAt: new Date(now.getTime() + 3_600_000), resendAfter: new Date(now.getTime() - 600_000) };
}
