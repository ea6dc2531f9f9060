import { Reasons } from '@whetstone/errors';

/** Reasons key-billing raises, including the shared ones the gateway's HTTP table knows. */
export const KeyBillingReasons = {
  ...Reasons,
  EMAIL_TAKEN: 'EMAIL_TAKEN',
  INVALID_CREDENTIALS: 'INVALID_CREDENTIALS',
  API_KEY_EXPIRED: 'API_KEY_EXPIRED',
  API_KEY_NOT_FOUND: 'API_KEY_NOT_FOUND',
  TEAM_NOT_FOUND: 'TEAM_NOT_FOUND',
  USER_NOT_FOUND: 'USER_NOT_FOUND',
  NOT_A_TEAM_MEMBER: 'NOT_A_TEAM_MEMBER',
  ADMIN_TOKEN_INVALID: 'ADMIN_TOKEN_INVALID',
  PLAN_HAS_NO_OVERAGE: 'PLAN_HAS_NO_OVERAGE',
} as const;

/** Where a billing denial sends the user; the gateway renders it as `resolution_url`. */
export const BILLING_RESOLUTION_URL = '/dashboard#credits';
