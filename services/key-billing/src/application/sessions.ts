import { randomUUID } from 'node:crypto';
import { errors } from '@whetstone/errors';
import { hashSecret, newToken, normalizeEmail, SESSION_SLIDE_AFTER_MS, SESSION_TTL_MS } from '../domain/credentials';
import type { Team, User } from '../domain/model';
import { KeyBillingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';

/** A live dashboard session as returned to the gateway. */
export interface SessionView {
  user: User;
  team: Team;
  csrfToken: string;
  expiresAt: Date;
}

// Spent on unknown emails too, so response time does not reveal which emails exist.
const DUMMY_HASH_INPUT = 'not-a-real-password';

/** Check a password and open a 30-day session; the token is returned once and stored hashed. */
export async function logIn(
  deps: UseCaseDeps,
  input: { email: string; password: string },
): Promise<SessionView & { sessionToken: string }> {
  const email = normalizeEmail(input.email);
  const user = email ? await deps.uow.repos.users.findByEmail(email) : null;
  const ok = user
    ? await deps.passwords.verify(input.password, user.passwordHash)
    : await deps.passwords.hash(DUMMY_HASH_INPUT).then(() => false);
  if (!user || !ok) throw errors.unauthenticated(R.INVALID_CREDENTIALS, 'Email or password is incorrect.');
  const team = await deps.uow.repos.teams.findByUserId(user.id);
  if (!team) throw errors.notFound(R.TEAM_NOT_FOUND, 'The user has no team.');

  const sessionToken = newToken();
  const csrfToken = newToken();
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await deps.uow.repos.sessions.create({
    id: randomUUID(),
    tokenHash: hashSecret(sessionToken),
    userId: user.id,
    teamId: team.id,
    csrfToken,
    createdAt: now,
    expiresAt,
  });
  return { sessionToken, csrfToken, user, team, expiresAt };
}

/** End a session; unknown tokens are fine (logging out twice is not an error). */
export async function logOut(deps: UseCaseDeps, input: { sessionToken: string }): Promise<void> {
  if (input.sessionToken) await deps.uow.repos.sessions.deleteByTokenHash(hashSecret(input.sessionToken));
}

/** Resolve a session token; slides the expiry forward at most once a day. */
export async function getSession(deps: UseCaseDeps, input: { sessionToken: string }): Promise<SessionView> {
  const required = () => errors.unauthenticated(R.SESSION_REQUIRED, 'Your session has expired; please log in again.');
  if (!input.sessionToken) throw required();
  const { repos } = deps.uow;
  const session = await repos.sessions.findByTokenHash(hashSecret(input.sessionToken));
  const now = deps.clock.now();
  if (!session || session.expiresAt.getTime() <= now.getTime()) throw required();
  const [user, team] = await Promise.all([repos.users.findById(session.userId), repos.teams.findById(session.teamId)]);
  if (!user || !team) throw required();
  // A blocked team is refused on every path: its sessions can no longer mint keys, projects or uploads.
  if (team.blocked) throw errors.unauthenticated(R.ACCOUNT_BLOCKED, 'This account is blocked.');

  let expiresAt = session.expiresAt;
  const slid = new Date(now.getTime() + SESSION_TTL_MS);
  if (slid.getTime() - expiresAt.getTime() >= SESSION_SLIDE_AFTER_MS) {
    await repos.sessions.extend(session.id, slid);
    expiresAt = slid;
  }
  return { user, team, csrfToken: session.csrfToken, expiresAt };
}
