import type { Client } from '@connectrpc/connect';
import type { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import type { Billing } from '../application/ports';

/** key-billing's spendability check over gRPC; a denial arrives as a typed AppError (402/403 at the edge). */
export function billingOverRpc(client: Client<typeof KeyBillingService>): Billing {
  return {
    async checkSpendable(teamId, estimatedCostMicroCredits, directModel) {
      await client.checkSpendable({ teamId, estimatedCostMicroCredits, directModel });
    },
  };
}
