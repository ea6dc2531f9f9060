import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { microToCredits } from '@whetstone/catalog';
import {
  KeyBillingService,
  LedgerEntryKind,
  Plan,
  type ApiKey,
  type GetUsageResponse,
  type Team,
  type User,
} from '@whetstone/proto/keybilling/v1';
import type { ApiKeyView, KeyBilling, SessionView, UsageView } from '../application/ports';

const iso = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);

function userView(user: User | undefined): SessionView['user'] {
  return { id: user?.id ?? '', email: user?.email ?? '', createdAt: iso(user?.createdAt) };
}

function teamView(team: Team | undefined): SessionView['team'] {
  return { id: team?.id ?? '', name: team?.name ?? '' };
}

/** The spec's API key fields, list flavour. */
export function apiKeyView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    created_at: iso(key.createdAt),
    api_key_last_digits: key.apiKeyLastDigits,
    expires_at: iso(key.expiresAt),
    last_used_at: iso(key.lastUsedAt),
    team_id: key.teamId || null,
    usage_tokens: Number(key.usageTokens),
    usage_cost: key.usageCost,
    request_count: Number(key.requestCount),
  };
}

/** The dashboard's credits page in the spec's shape (credits, not micro-credits). */
function usageView(res: GetUsageResponse): UsageView {
  const a = res.account;
  return {
    plan: a?.team?.plan === Plan.PAID ? 'paid' : 'free',
    balance_credits: microToCredits(a?.balanceMicroCredits ?? 0n),
    account: {
      plan: a?.team?.plan === Plan.PAID ? 'paid' : 'free',
      balance_credits: microToCredits(a?.balanceMicroCredits ?? 0n),
      included_credits: microToCredits(a?.includedMicroCredits ?? 0n),
      overage_enabled: a?.overageEnabled ?? false,
      overage_ceiling_credits: microToCredits(a?.overageCeilingMicroCredits ?? 0n),
      overage_used_credits: microToCredits(a?.overageUsedMicroCredits ?? 0n),
      used_this_month_credits: microToCredits(a?.usedThisMonthMicroCredits ?? 0n),
      billing_month: a?.billingMonth ?? null,
      blocked: a?.team?.blocked ?? false,
    },
    recent_entries: res.recentEntries.map((e) => ({
      id: e.id,
      kind: (LedgerEntryKind[e.kind] ?? 'UNSPECIFIED').toLowerCase(),
      amount_credits: microToCredits(e.amountMicroCredits),
      balance_after_credits: microToCredits(e.balanceAfterMicroCredits),
      note: e.note || null,
      usage_id: e.usageId || null,
      key_id: e.keyId || null,
      created_at: iso(e.createdAt),
    })),
    keys: res.keys.map(apiKeyView),
  };
}

/** KeyBilling port over the real gRPC client. Errors arrive as AppErrors from @whetstone/rpc. */
export function keyBillingOverRpc(client: Client<typeof KeyBillingService>, ready: () => Promise<boolean>): KeyBilling {
  return {
    async signUp(email, password) {
      const res = await client.signUp({ email, password });
      return { user: userView(res.user), team: teamView(res.team) };
    },
    async logIn(email, password) {
      const res = await client.logIn({ email, password });
      return {
        sessionToken: res.sessionToken,
        csrfToken: res.csrfToken,
        user: userView(res.user),
        team: teamView(res.team),
        expiresAt: iso(res.expiresAt),
      };
    },
    async logOut(sessionToken) {
      await client.logOut({ sessionToken });
    },
    async getSession(sessionToken) {
      const res = await client.getSession({ sessionToken });
      return {
        user: userView(res.user),
        team: teamView(res.team),
        csrfToken: res.csrfToken,
        expiresAt: iso(res.expiresAt),
      };
    },
    async createApiKey({ teamId, userId }, name, expiresAt) {
      const res = await client.createApiKey({
        teamId,
        userId,
        name,
        ...(expiresAt ? { expiresAt: { seconds: BigInt(Math.floor(expiresAt.getTime() / 1000)), nanos: 0 } } : {}),
      });
      const key = res.key!;
      return {
        secret_key: res.secretKey,
        id: key.id,
        name: key.name,
        created_at: iso(key.createdAt),
        api_key_last_digits: key.apiKeyLastDigits,
        expires_at: iso(key.expiresAt),
        team_id: key.teamId,
        payment_customer_created: res.paymentCustomerCreated,
      };
    },
    async listApiKeys(teamId) {
      const res = await client.listApiKeys({ teamId });
      return res.keys.map(apiKeyView);
    },
    async revokeApiKey(teamId, keyId) {
      const res = await client.revokeApiKey({ teamId, keyId });
      return { success: res.success, message: res.message || null };
    },
    async authenticateApiKey(secretKey) {
      const res = await client.authenticateApiKey({ secretKey });
      const caller = res.caller!;
      return {
        principal: { keyId: caller.keyId, teamId: caller.teamId, userId: caller.userId },
        expiresAtMs: res.keyExpiresAt ? timestampDate(res.keyExpiresAt).getTime() : null,
      };
    },
    async checkSpendable(teamId, estimatedCostMicroCredits, directModel) {
      await client.checkSpendable({ teamId, estimatedCostMicroCredits, directModel });
    },
    async getUsage(teamId) {
      return usageView(await client.getUsage({ teamId }));
    },
    ready,
  };
}
