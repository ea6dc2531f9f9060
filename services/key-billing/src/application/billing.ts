import { randomUUID } from 'node:crypto';
import { errors } from '@whetstone/errors';
import { accountView, type AccountView } from '../domain/account';
import { startOfBillingMonth } from '../domain/billing-month';
import type { ApiKey, LedgerEntry, Team, UsageRecord } from '../domain/model';
import type { Repositories } from '../domain/ports';
import { KeyBillingReasons as R } from '../domain/reasons';
import { decideSpend, type SpendDecision } from '../domain/spendability';
import { planUsageDebits, type RecordUsageOutcome } from '../domain/usage-debits';
import type { UseCaseDeps } from './deps';

/** How many ledger entries the credits page and `admin show` include. */
export const RECENT_ENTRIES = 20;

async function requireTeam(repos: Repositories, teamId: string): Promise<Team> {
  const team = teamId ? await repos.teams.findById(teamId) : null;
  if (!team) throw errors.notFound(R.TEAM_NOT_FOUND, 'Team not found.');
  return team;
}

/** The account view of a team at the clock's now. */
export async function loadAccount(deps: UseCaseDeps, team: Team): Promise<AccountView> {
  const now = deps.clock.now();
  const used = await deps.uow.repos.ledger.usageSince(team.id, startOfBillingMonth(now));
  return accountView(team, used, now);
}

/** Whether the team may start a request of the estimated cost; denials are thrown. */
export async function checkSpendable(
  deps: UseCaseDeps,
  input: { teamId: string; estimatedCostMicroCredits: bigint; directModel: boolean },
): Promise<SpendDecision & { balanceMicroCredits: bigint }> {
  const { repos } = deps.uow;
  const team = await requireTeam(repos, input.teamId);
  const hasGrantedCredits = input.directModel && team.plan === 'free' ? await repos.ledger.hasGrant(team.id) : false;
  const decision = decideSpend(team, input.estimatedCostMicroCredits, input.directModel, { hasGrantedCredits });
  return { ...decision, balanceMicroCredits: team.balanceMicroCredits };
}

/** The dashboard's credits page: account, recent ledger and per-key usage. */
export async function getUsage(
  deps: UseCaseDeps,
  input: { teamId: string },
): Promise<{ account: AccountView; recent: LedgerEntry[]; keys: ApiKey[] }> {
  const { repos } = deps.uow;
  const team = await requireTeam(repos, input.teamId);
  const [account, recent, keys] = await Promise.all([
    loadAccount(deps, team),
    repos.ledger.recent(team.id, RECENT_ENTRIES),
    repos.keys.listActive(team.id),
  ]);
  return { account, recent, keys };
}

export type { RecordUsageOutcome };

/** Debit one metered request exactly once (a batch of one; see recordUsageBatch). */
export async function recordUsage(deps: UseCaseDeps, usage: UsageRecord): Promise<RecordUsageOutcome> {
  return (await recordUsageBatch(deps, [usage]))[0]!;
}

/**
 * Debits a delivered batch of usage in ONE transaction, each usage id exactly
 * once: the teams' rows are locked (in id order), the ids already debited are
 * read under those locks, and the new debits, the balances and the keys'
 * counters are written with one statement each, however large the batch.
 * The usage id is also unique in the ledger, so a racing writer cannot debit twice.
 */
export async function recordUsageBatch(deps: UseCaseDeps, usages: UsageRecord[]): Promise<RecordUsageOutcome[]> {
  if (!usages.length) return [];
  return deps.uow.transaction(async (repos) => {
    const teams = await repos.teams.lockMany([...new Set(usages.map((u) => u.teamId))]);
    const known = usages.filter((u) => teams.some((t) => t.id === u.teamId)).map((u) => u.usageId);
    const debited = known.length ? await repos.ledger.debitedAmong([...new Set(known)]) : new Set<string>();
    const plan = planUsageDebits(usages, new Map(teams.map((t) => [t.id, t])), debited, randomUUID);
    if (plan.debits.length) await repos.ledger.appendUsageDebits(plan.debits);
    if (plan.keyTotals.length) await repos.keys.addUsageTotals(plan.keyTotals);
    return plan.outcomes;
  });
}
