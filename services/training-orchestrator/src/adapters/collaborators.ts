import type { Client } from '@connectrpc/connect';
import { DatasetType, type DatasetService } from '@whetstone/proto/dataset/v1';
import type { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import type { DatasetKind, DatasetResolver, SpendCheck } from '../application/ports';

const KIND: Partial<Record<DatasetType, DatasetKind>> = {
  [DatasetType.EXTRACTION]: 'extraction',
  [DatasetType.CLASSIFICATION]: 'classification',
  [DatasetType.GENERATION]: 'generation',
};

/** Datasets over gRPC: the newest ready version's split locations. */
export function datasetsOverRpc(client: Client<typeof DatasetService>): DatasetResolver {
  return {
    async resolve(teamId, name) {
      const res = await client.resolveForTraining({ teamId, datasetName: name });
      return {
        name,
        version_number: res.version?.versionNumber ?? 0,
        size: res.version?.size ?? 0,
        bucket: res.bucket,
        train_key: res.trainKey,
        heldout_key: res.heldoutKey,
        type: KIND[res.version?.type ?? DatasetType.UNSPECIFIED] ?? 'extraction',
      };
    },
  };
}

/** Spendability from key-billing (usage itself travels as TrainingUsageRecorded through the outbox). */
export function spendCheckOverRpc(client: Client<typeof KeyBillingService>): SpendCheck {
  return {
    async checkSpendable(teamId, cost) {
      await client.checkSpendable({ teamId, estimatedCostMicroCredits: cost, directModel: false });
    },
  };
}
