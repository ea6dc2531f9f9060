import { randomUUID } from 'node:crypto';
import { errors } from '@whetstone/errors';
import type { AccountView } from '../domain/account';
import { billingMonthOf } from '../domain/billing-month';
import { normalizeEmail } from '../domain/credentials';
import { DEFAULT_PAID_INCLUDED_MICRO } from '../domain/money';
import type { LedgerEntry, Plan, PlanTerms, Team, User } from '../domain/model';
import type { Repositories } from '../domain/ports';
import { KeyBillingReasons as R } from '../domain/reasons';
import { renewalAmounts } from '../domain/renewal';
import { loadAccount, RECENT_ENTRIES } from './billing';
import type { UseCaseDeps } from './deps';

/** Picks a team by id or by a member's email. */
export type AccountSelector = { teamId: string } | { email: string };

/** Resolve a selector to a team id, or NotFound. */
export async function resolveTeamId(repos: Repositories, selector: AccountSelector): Promise<string> {
  if ('teamId' in selector) {
    const team = selector.teamId ? await repos.teams.findById(selector.teamId) : null;
    if (!team) throw errors.notFound(R.TEAM_NOT_FOUND, `No team with id ${selector.teamId}.`);
    return team.id;
  }
  const email = normalizeEmail(selector.email);
  const user = email ? await repos.users.findByEmail(email) : null;
  const team = user ? await repos.teams.findByUserId(user.id) : null;
  if (!team) throw errors.notFound(R.USER_NOT_FOUND, `No account with email ${selector.email}.`);
  return team.id;
}

/** The account view of a team known to exist. */
export async function accountOf(deps: UseCaseDeps, teamId: string): Promise<AccountView> {
  const team = await deps.uow.repos.teams.findById(teamId);
  return loadAccount(deps, team!);
}

/** Add operator-granted credits (a purchase or goodwill) to the ledger. */
export async function grantCredits(
  deps: UseCaseDeps,
  input: { account: AccountSelector; microCredits: bigint; note: string },
): Promise<{ account: AccountView; entry: LedgerEntry }> {
  if (input.microCredits <= 0n) {
    throw errors.invalid(R.VALIDATION_FAILED, 'Invalid amount', [
      { field: 'micro_credits', message: 'must be positive', code: 'too_small' },
    ]);
  }
  const teamId = await resolveTeamId(deps.uow.repos, input.account);
  const entry = await deps.uow.transaction((repos) =>
    repos.ledger.append({
      id: randomUUID(),
      teamId,
      kind: 'grant',
      amountMicroCredits: input.microCredits,
      note: input.note.trim() || 'Operator grant',
      createdAt: deps.clock.now(),
    }),
  );
  return { account: await accountOf(deps, teamId), entry };
}

/** Renew one paid team for `month` unless already done; true when this call renewed it. */
async function renewTeam(repos: Repositories, teamId: string, month: string, at: Date): Promise<boolean> {
  if (!(await repos.renewals.claim(teamId, month))) return false;
  const team = await repos.teams.lock(teamId);
  if (!team || team.plan !== 'paid') return true;
  const { overageInvoiced, topUp } = renewalAmounts(team);
  if (overageInvoiced > 0n) {
    await repos.ledger.append({
      id: randomUUID(),
      teamId,
      kind: 'overage_invoiced',
      amountMicroCredits: overageInvoiced,
      note: `Overage invoiced before ${month}`,
      createdAt: at,
    });
  }
  if (topUp > 0n) {
    await repos.ledger.append({
      id: randomUUID(),
      teamId,
      kind: 'plan_renewal',
      amountMicroCredits: topUp,
      note: `Included credits for ${month}`,
      createdAt: at,
    });
  }
  await repos.teams.setLastRenewedMonth(teamId, month);
  return true;
}

/** Switch plans. Moving to paid renews the current month at once, so included credits are usable immediately. */
export async function changePlan(
  deps: UseCaseDeps,
  input: {
    account: AccountSelector;
    plan: Plan;
    includedMicroCredits?: bigint;
    overageEnabled?: boolean;
    overageCeilingMicroCredits?: bigint;
    paymentMethodVerified?: boolean;
  },
): Promise<AccountView> {
  const negative = [
    ['included_micro_credits', input.includedMicroCredits],
    ['overage_ceiling_micro_credits', input.overageCeilingMicroCredits],
  ].filter(([, v]) => typeof v === 'bigint' && v < 0n);
  if (negative.length > 0) {
    throw errors.invalid(
      R.VALIDATION_FAILED,
      'Invalid plan terms',
      negative.map(([field]) => ({ field: String(field), message: 'must not be negative', code: 'too_small' })),
    );
  }
  const teamId = await resolveTeamId(deps.uow.repos, input.account);
  const now = deps.clock.now();
  await deps.uow.transaction(async (repos) => {
    const team = (await repos.teams.lock(teamId))!;
    const terms: PlanTerms =
      input.plan === 'free'
        ? {
            plan: 'free',
            includedMicroCredits: 0n,
            overageEnabled: false,
            overageCeilingMicroCredits: 0n,
            paymentMethodVerified: input.paymentMethodVerified ?? team.paymentMethodVerified,
          }
        : {
            plan: 'paid',
            includedMicroCredits:
              input.includedMicroCredits ??
              (team.plan === 'paid' ? team.includedMicroCredits : DEFAULT_PAID_INCLUDED_MICRO),
            overageEnabled: input.overageEnabled ?? team.overageEnabled,
            overageCeilingMicroCredits: input.overageCeilingMicroCredits ?? team.overageCeilingMicroCredits,
            paymentMethodVerified: input.paymentMethodVerified ?? team.paymentMethodVerified,
          };
    await repos.teams.updateTerms(teamId, terms);
    if (terms.plan === 'paid' && team.plan !== 'paid') await renewTeam(repos, teamId, billingMonthOf(now), now);
  });
  return accountOf(deps, teamId);
}

/** Block or unblock a team and announce it (AccountBlocked) in the same transaction. */
export async function setAccountBlocked(
  deps: UseCaseDeps,
  input: { account: AccountSelector; blocked: boolean; reason: string },
): Promise<AccountView> {
  const reason = input.reason.trim();
  if (input.blocked && !reason) {
    throw errors.invalid(R.VALIDATION_FAILED, 'A reason is required to block an account', [
      { field: 'reason', message: 'required', code: 'required' },
    ]);
  }
  const teamId = await resolveTeamId(deps.uow.repos, input.account);
  await deps.uow.transaction(async (repos) => {
    await repos.teams.setBlocked(teamId, input.blocked, input.blocked ? reason : '');
    await repos.outbox.append({ type: 'AccountBlocked', teamId, blocked: input.blocked });
  });
  return accountOf(deps, teamId);
}

/** Renew every paid team for the billing month of `now`; each team at most once per month. */
export async function renewMonthly(
  deps: UseCaseDeps,
  input: { now?: Date },
): Promise<{ billingMonth: string; renewed: number; alreadyRenewed: number }> {
  const at = input.now ?? deps.clock.now();
  const month = billingMonthOf(at);
  let renewed = 0;
  let alreadyRenewed = 0;
  for (const teamId of await deps.uow.repos.teams.listPaidTeamIds()) {
    const done = await deps.uow.transaction((repos) => renewTeam(repos, teamId, month, at));
    if (done) renewed++;
    else alreadyRenewed++;
  }
  return { billingMonth: month, renewed, alreadyRenewed };
}

/** One team in full, for operators. */
export async function getAccount(
  deps: UseCaseDeps,
  input: { account: AccountSelector },
): Promise<{ account: AccountView; members: User[]; recent: LedgerEntry[] }> {
  const { repos } = deps.uow;
  const teamId = await resolveTeamId(repos, input.account);
  const team = (await repos.teams.findById(teamId)) as Team;
  const [account, members, recent] = await Promise.all([
    loadAccount(deps, team),
    repos.users.listByTeam(teamId),
    repos.ledger.recent(teamId, RECENT_ENTRIES),
  ]);
  return { account, members, recent };
}
