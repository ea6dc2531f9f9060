import { errors } from '@whetstone/errors';
import type { AccountView } from '../domain/account';
import { KeyBillingReasons as R } from '../domain/reasons';
import { accountOf, resolveTeamId, type AccountSelector } from './admin';
import type { UseCaseDeps } from './deps';

/**
 * Sets a paid team's monthly overage ceiling, and turns overage on unless told
 * otherwise. The free plan has no overage, so it is refused there (409).
 */
export async function setOverageCeiling(
  deps: UseCaseDeps,
  input: { account: AccountSelector; ceilingMicroCredits: bigint; overageEnabled?: boolean },
): Promise<AccountView> {
  if (input.ceilingMicroCredits < 0n) {
    throw errors.invalid(R.VALIDATION_FAILED, 'Invalid overage ceiling', [
      { field: 'overage_ceiling_micro_credits', message: 'must not be negative', code: 'too_small' },
    ]);
  }
  const teamId = await resolveTeamId(deps.uow.repos, input.account);
  await deps.uow.transaction(async (repos) => {
    const team = (await repos.teams.lock(teamId))!;
    if (team.plan !== 'paid') {
      throw errors.precondition(
        R.PLAN_HAS_NO_OVERAGE,
        'The free plan has no overage; move the team to the paid plan first (set-plan --plan paid).',
      );
    }
    await repos.teams.updateTerms(teamId, {
      plan: team.plan,
      includedMicroCredits: team.includedMicroCredits,
      overageEnabled: input.overageEnabled ?? true,
      overageCeilingMicroCredits: input.ceilingMicroCredits,
      paymentMethodVerified: team.paymentMethodVerified,
    });
  });
  return accountOf(deps, teamId);
}
