/**
 * What the gateway needs from key-billing, in plain shapes. The gateway holds
 * no business rules: every decision here is key-billing's, reached over gRPC.
 */

export interface Principal {
  keyId: string;
  teamId: string;
  userId: string;
}

export interface SessionView {
  user: { id: string; email: string; createdAt: string | null };
  team: { id: string; name: string };
  csrfToken: string;
  expiresAt: string | null;
}

export interface ApiKeyView {
  id: string;
  name: string;
  created_at: string | null;
  api_key_last_digits: string;
  expires_at: string | null;
  last_used_at: string | null;
  team_id: string | null;
  usage_tokens: number;
  usage_cost: number;
  request_count: number;
}

export interface CreatedApiKey {
  secret_key: string;
  id: string;
  name: string;
  created_at: string | null;
  api_key_last_digits: string;
  expires_at: string | null;
  team_id: string;
  payment_customer_created: boolean;
}

export interface UsageView {
  plan: string;
  balance_credits: number;
  account: Record<string, unknown>;
  recent_entries: Record<string, unknown>[];
  keys: ApiKeyView[];
}

export interface KeyBilling {
  signUp(email: string, password: string): Promise<{ user: SessionView['user']; team: SessionView['team'] }>;
  logIn(email: string, password: string): Promise<SessionView & { sessionToken: string }>;
  logOut(sessionToken: string): Promise<void>;
  getSession(sessionToken: string): Promise<SessionView>;
  createApiKey(principal: { teamId: string; userId: string }, name: string, expiresAt?: Date): Promise<CreatedApiKey>;
  listApiKeys(teamId: string): Promise<ApiKeyView[]>;
  revokeApiKey(teamId: string, keyId: string): Promise<{ success: boolean; message: string | null }>;
  authenticateApiKey(secret: string): Promise<Principal>;
  checkSpendable(teamId: string, estimatedCostMicroCredits: bigint, directModel: boolean): Promise<void>;
  getUsage(teamId: string): Promise<UsageView>;
  /** True when key-billing answers its health check. */
  ready(): Promise<boolean>;
}
