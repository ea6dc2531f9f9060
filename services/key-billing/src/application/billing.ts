import { randomUUID } from 'node:crypto';
import { errors } from '@whetstone/errors';
import { accountView, type AccountView } from '../domain/account';
import { startOfBillingMonth } from '../domain/billing-month';
import type { ApiKey, LedgerEntry, Team, UsageRecord } from '../domain/model';
import type { Repositories } from '../domain/ports';
import { KeyBillingReasons as R } from '../domain/reasons';
import { decideSpend, type SpendDecision } from '../domain/spendability';
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

export type RecordUsageOutcome = 'debited' | 'duplicate' | 'unknown_team';

/**
 * Debit one metered request exactly once: the team row lock serialises
 * deliveries, the usage id is checked under it (and is unique in the ledger),
 * and the key's counters move in the same transaction.
 */
export async function recordUsage(deps: UseCaseDeps, usage: UsageRecord): Promise<RecordUsageOutcome> {
  return deps.uow.transaction(async (repos) => debit(repos, await repos.teams.lock(usage.teamId), usage));
}

/**
 * Debits a batch of usage records in one transaction (each exactly once, as
 * recordUsage would), each team locked once and in a fixed order. The consumer
 * of the Postgres event log hands whole batches here: one commit instead of
 * one per inference.
 */
export async function recordUsageBatch(deps: UseCaseDeps, usages: UsageRecord[]): Promise<RecordUsageOutcome[]> {
  if (!usages.length) return [];
  return deps.uow.transaction(async (repos) => {
    const teams = new Map<string, Team | null>();
    for (const teamId of [...new Set(usages.map((u) => u.teamId))].sort())
      teams.set(teamId, await repos.teams.lock(teamId));
    const outcomes: RecordUsageOutcome[] = [];
    for (const usage of usages) outcomes.push(await debit(repos, teams.get(usage.teamId) ?? null, usage));
    return outcomes;
  });
}

/** One debit under the team's row lock: the usage id is checked under it (and is unique in the ledger). */
async function debit(repos: Repositories, team: Team | null, usage: UsageRecord): Promise<RecordUsageOutcome> {
  if (!team) return 'unknown_team';
  if (await repos.ledger.hasUsage(usage.usageId)) return 'duplicate';
  const cost = usage.costMicroCredits > 0n ? usage.costMicroCredits : 0n;
  await repos.ledger.append({
    id: randomUUID(),
    teamId: team.id,
    kind: 'usage',
    amountMicroCredits: -cost,
    note: usage.model,
    usageId: usage.usageId,
    keyId: usage.keyId || null,
    createdAt: usage.occurredAt,
  });
  if (usage.keyId)
    await repos.keys.addUsage(usage.keyId, usage.inputTokens + usage.outputTokens, cost, usage.occurredAt);
  return 'debited';
}
