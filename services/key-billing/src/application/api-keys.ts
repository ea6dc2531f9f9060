import { randomUUID } from 'node:crypto';
import { errors } from '@whetstone/errors';
import { hashSecret, LAST_DIGITS, looksLikeApiKey, newApiKeySecret } from '../domain/credentials';
import type { ApiKey } from '../domain/model';
import { KeyBillingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';

const MAX_NAME_LENGTH = 100;

/** Who an API key acts for. */
export interface Principal {
  keyId: string;
  teamId: string;
  userId: string;
}

/** Mint a key for a team member; the secret is returned here and never again. */
export async function createApiKey(
  deps: UseCaseDeps,
  input: { teamId: string; userId: string; name: string; expiresAt: Date | null },
): Promise<{ secretKey: string; key: ApiKey }> {
  const name = input.name.trim();
  const now = deps.clock.now();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) {
    throw errors.invalid(R.VALIDATION_FAILED, 'Invalid key name', [
      { field: 'name', message: `must be 1 to ${MAX_NAME_LENGTH} characters`, code: 'invalid_length' },
    ]);
  }
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    throw errors.invalid(R.VALIDATION_FAILED, 'Invalid expiry', [
      { field: 'expires_at', message: 'must be in the future', code: 'in_the_past' },
    ]);
  }
  const { repos } = deps.uow;
  if (!(await repos.teams.isMember(input.teamId, input.userId))) {
    throw errors.denied(R.NOT_A_TEAM_MEMBER, 'The user is not a member of this team.');
  }
  if ((await repos.teams.findById(input.teamId))?.blocked)
    throw errors.unauthenticated(R.ACCOUNT_BLOCKED, 'This account is blocked.');
  const secretKey = newApiKeySecret();
  const key: ApiKey = {
    id: randomUUID(),
    teamId: input.teamId,
    userId: input.userId,
    name,
    secretHash: hashSecret(secretKey),
    lastDigits: secretKey.slice(-LAST_DIGITS),
    createdAt: now,
    expiresAt: input.expiresAt,
    revokedAt: null,
    usageTokens: 0n,
    usageCostMicroCredits: 0n,
    requestCount: 0n,
    lastUsedAt: null,
  };
  await repos.keys.create(key);
  return { secretKey, key };
}

/** The team's active keys with usage; secrets are never stored, so never listed. */
export function listApiKeys(deps: UseCaseDeps, input: { teamId: string }): Promise<ApiKey[]> {
  return deps.uow.repos.keys.listActive(input.teamId);
}

/** Revoke a key of the team and announce it (KeyRevoked) in the same transaction. */
export async function revokeApiKey(deps: UseCaseDeps, input: { teamId: string; keyId: string }): Promise<void> {
  const now = deps.clock.now();
  await deps.uow.transaction(async (repos) => {
    const key = await repos.keys.findActive(input.teamId, input.keyId);
    if (!key) throw errors.notFound(R.API_KEY_NOT_FOUND, 'API key not found.');
    await repos.keys.revoke(key.id, now);
    await repos.outbox.append({ type: 'KeyRevoked', keyId: key.id, teamId: key.teamId });
  });
}

/** Resolve a presented key to its principal and its expiry (null: never), or say precisely why not. */
export async function authenticateApiKey(
  deps: UseCaseDeps,
  input: { secretKey: string },
): Promise<Principal & { expiresAt: Date | null }> {
  const invalid = () => errors.unauthenticated(R.API_KEY_INVALID, 'Invalid API key.');
  if (!looksLikeApiKey(input.secretKey)) throw invalid();
  const found = await deps.uow.repos.keys.findBySecretHash(hashSecret(input.secretKey));
  if (!found) throw invalid();
  const { key, teamBlocked } = found;
  if (key.revokedAt) throw errors.unauthenticated(R.API_KEY_REVOKED, 'This API key has been revoked.');
  if (key.expiresAt && key.expiresAt.getTime() <= deps.clock.now().getTime()) {
    throw errors.unauthenticated(R.API_KEY_EXPIRED, 'This API key has expired.');
  }
  if (teamBlocked) throw errors.unauthenticated(R.ACCOUNT_BLOCKED, 'This account is blocked.');
  return { keyId: key.id, teamId: key.teamId, userId: key.userId, expiresAt: key.expiresAt };
}
