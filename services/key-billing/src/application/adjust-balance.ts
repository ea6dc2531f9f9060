import { randomUUID } from 'node:crypto';
import { errors } from '@whetstone/errors';
import type { AccountView } from '../domain/account';
import type { LedgerEntry } from '../domain/model';
import { KeyBillingReasons as R } from '../domain/reasons';
import { accountOf, resolveTeamId, type AccountSelector } from './admin';
import type { UseCaseDeps } from './deps';

/**
 * An operator's correction of a team's balance: a credit (positive) or a debit
 * (negative, which may take the balance below zero), written as one ledger
 * entry of kind `adjustment` with the reason as its note.
 */
export async function adjustBalance(
  deps: UseCaseDeps,
  input: { account: AccountSelector; microCredits: bigint; reason: string },
): Promise<{ account: AccountView; entry: LedgerEntry }> {
  const reason = input.reason.trim();
  const problems = [
    ...(input.microCredits === 0n
      ? [{ field: 'micro_credits', message: 'must not be zero (positive credits, negative debits)', code: 'invalid' }]
      : []),
    ...(reason ? [] : [{ field: 'reason', message: 'required: it is kept in the ledger', code: 'required' }]),
  ];
  if (problems.length > 0) throw errors.invalid(R.VALIDATION_FAILED, 'Invalid balance adjustment', problems);
  const teamId = await resolveTeamId(deps.uow.repos, input.account);
  const entry = await deps.uow.transaction(async (repos) => {
    await repos.teams.lock(teamId);
    return repos.ledger.append({
      id: randomUUID(),
      teamId,
      kind: 'adjustment',
      amountMicroCredits: input.microCredits,
      note: reason,
      createdAt: deps.clock.now(),
    });
  });
  return { account: await accountOf(deps, teamId), entry };
}
