import { randomUUID } from 'node:crypto';
import { AppError, errors } from '@whetstone/errors';
import { normalizeEmail } from '../domain/credentials';
import { FREE_ALLOWANCE_MICRO } from '../domain/money';
import type { Team, User } from '../domain/model';
import { KeyBillingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';

export const MIN_PASSWORD_LENGTH = 8;
const MAX_PASSWORD_LENGTH = 256;

/** Validate dashboard credentials' shape; returns the normalised email. */
export function validateCredentials(email: string, password: string): string {
  const normalized = normalizeEmail(email);
  const problems = [];
  if (!normalized) problems.push({ field: 'email', message: 'must be a valid email address', code: 'invalid_email' });
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    problems.push({
      field: 'password',
      message: `must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`,
      code: 'invalid_length',
    });
  }
  if (problems.length > 0 || !normalized) throw errors.invalid(R.VALIDATION_FAILED, 'Invalid signup details', problems);
  return normalized;
}

/** Create a user, their team (free plan) and the one-time free allowance, atomically. */
export async function signUp(
  deps: UseCaseDeps,
  input: { email: string; password: string },
): Promise<{ user: User; team: Team }> {
  const email = validateCredentials(input.email, input.password);
  const passwordHash = await deps.passwords.hash(input.password);
  const now = deps.clock.now();
  const user: User = { id: randomUUID(), email, passwordHash, createdAt: now };
  const teamId = randomUUID();

  return deps.uow.transaction(async (repos) => {
    if (!(await repos.users.create(user))) {
      throw new AppError('AlreadyExists', R.EMAIL_TAKEN, 'An account with this email already exists.');
    }
    await repos.teams.create({
      id: teamId,
      name: `${email.split('@')[0]}'s team`,
      ownerUserId: user.id,
      plan: 'free',
      includedMicroCredits: 0n,
      overageEnabled: false,
      overageCeilingMicroCredits: 0n,
      paymentMethodVerified: false,
      blocked: false,
      blockedReason: '',
      createdAt: now,
    });
    await repos.ledger.append({
      id: randomUUID(),
      teamId,
      kind: 'signup_allowance',
      amountMicroCredits: deps.freeAllowanceMicro ?? FREE_ALLOWANCE_MICRO,
      note: 'Free plan one-time allowance',
      createdAt: now,
    });
    const team = await repos.teams.findById(teamId);
    return { user, team: team! };
  });
}
