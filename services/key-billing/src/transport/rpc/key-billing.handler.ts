import type { ServiceImpl } from '@connectrpc/connect';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { authenticateApiKey, createApiKey, listApiKeys, revokeApiKey } from '../../application/api-keys';
import { checkSpendable, getUsage } from '../../application/billing';
import type { UseCaseDeps } from '../../application/deps';
import { getSession, logIn, logOut } from '../../application/sessions';
import { signUp } from '../../application/sign-up';
import {
  accountToPb,
  apiKeyToPb,
  dateOf,
  ledgerEntryToPb,
  teamToPb,
  timestampFromDate,
  userToPb,
} from './key-billing.mapper';

/** KeyBillingService: proto in, use case, proto out. No rules here. */
export function keyBillingHandler(deps: UseCaseDeps): ServiceImpl<typeof KeyBillingService> {
  return {
    async signUp(req) {
      const { user, team } = await signUp(deps, { email: req.email, password: req.password });
      return { user: userToPb(user), team: teamToPb(team) };
    },
    async logIn(req) {
      const s = await logIn(deps, { email: req.email, password: req.password });
      return {
        sessionToken: s.sessionToken,
        csrfToken: s.csrfToken,
        user: userToPb(s.user),
        team: teamToPb(s.team),
        expiresAt: timestampFromDate(s.expiresAt),
      };
    },
    async logOut(req) {
      await logOut(deps, { sessionToken: req.sessionToken });
      return {};
    },
    async getSession(req) {
      const s = await getSession(deps, { sessionToken: req.sessionToken });
      return {
        user: userToPb(s.user),
        team: teamToPb(s.team),
        csrfToken: s.csrfToken,
        expiresAt: timestampFromDate(s.expiresAt),
      };
    },
    async createApiKey(req) {
      const { secretKey, key } = await createApiKey(deps, {
        teamId: req.teamId,
        userId: req.userId,
        name: req.name,
        expiresAt: dateOf(req.expiresAt),
      });
      // No payment provider exists, so no customer record is ever created.
      return { secretKey, key: apiKeyToPb(key), paymentCustomerCreated: false };
    },
    async listApiKeys(req) {
      return { keys: (await listApiKeys(deps, { teamId: req.teamId })).map(apiKeyToPb) };
    },
    async revokeApiKey(req) {
      await revokeApiKey(deps, { teamId: req.teamId, keyId: req.keyId });
      return { success: true, message: 'API key revoked.' };
    },
    async authenticateApiKey(req) {
      const { expiresAt, ...caller } = await authenticateApiKey(deps, { secretKey: req.secretKey });
      return { caller, ...(expiresAt ? { keyExpiresAt: timestampFromDate(expiresAt) } : {}) };
    },
    async checkSpendable(req) {
      const result = await checkSpendable(deps, {
        teamId: req.teamId,
        estimatedCostMicroCredits: req.estimatedCostMicroCredits,
        directModel: req.directModel,
      });
      return { ok: true, balanceMicroCredits: result.balanceMicroCredits, overage: result.overage };
    },
    async getUsage(req) {
      const usage = await getUsage(deps, { teamId: req.teamId });
      return {
        account: accountToPb(usage.account),
        recentEntries: usage.recent.map(ledgerEntryToPb),
        keys: usage.keys.map(apiKeyToPb),
      };
    },
  };
}
