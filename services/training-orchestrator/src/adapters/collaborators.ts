import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { encodeEvent, Topics } from '@whetstone/events';
import { DatasetService } from '@whetstone/proto/dataset/v1';
import { UsageRecordedSchema } from '@whetstone/proto/inference/v1';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import type { Billing, DatasetResolver } from '../application/training';
import type { PrismaClient } from '../generated/prisma/client';

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
      };
    },
  };
}

/** Spendability from key-billing; usage as UsageRecorded through this service's outbox (usage id = job id). */
export function billingOverRpc(client: Client<typeof KeyBillingService>, prisma: PrismaClient): Billing {
  return {
    async checkSpendable(teamId, cost) {
      await client.checkSpendable({ teamId, estimatedCostMicroCredits: cost, directModel: false });
    },
    async recordTrainingUsage(job, cost, exampleEpochs) {
      const row = encodeEvent(
        Topics.billingUsage,
        UsageRecordedSchema,
        create(UsageRecordedSchema, {
          usageId: `training:${job.id}`,
          teamId: job.teamId,
          keyId: job.keyId,
          model: job.rootBaseModel,
          inputTokens: BigInt(exampleEpochs),
          outputTokens: 0n,
          costMicroCredits: cost,
          occurredAt: timestampFromDate(new Date()),
        }),
        job.teamId,
      );
      await prisma.outboxEvent.create({
        data: {
          topic: row.topic,
          key: row.key,
          type: row.type,
          payload: Buffer.from(row.payload),
          headers: row.headers,
        },
      });
    },
  };
}
