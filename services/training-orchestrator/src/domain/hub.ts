/** `owner/name` as the Hugging Face hub accepts it. */
export const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}\/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;

/** Shared with the router's upstream providers: one rule for every operator-configured outbound target. */
export { isNonPublicAddress } from '@whetstone/config';
