import { Code, ConnectError, type Client } from '@connectrpc/connect';
import { DatasetType, type DatasetService } from '@whetstone/proto/dataset/v1';
import { DeploymentStatus, type InferenceRouterService } from '@whetstone/proto/inference/v1';
import type { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { errors } from '@whetstone/errors';
import { TrainingReasons as R } from '../domain/reasons';
import type { DatasetKind, DatasetResolver, FeedbackVersioner, ProjectsPort, SpendCheck } from '../application/ports';

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
        ...(res.version?.corrections ? { corrections: res.version.corrections } : {}),
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

/** Projects from the inference-router: the active deployment's job, and deploying a promoted candidate. */
export function projectsOverRpc(client: Client<typeof InferenceRouterService>): ProjectsPort {
  return {
    async activeJob(actor, projectId) {
      const { projects } = await client.listProjects({ caller: actor });
      const project = projects.find((p) => p.id === projectId);
      if (!project) throw errors.notFound(R.PROJECT_NOT_FOUND, `Project '${projectId}' was not found.`);
      return project.activeTrainingJobId;
    },
    async deploy(actor, projectId, jobId) {
      await client.createDeployment({ caller: actor, projectId, trainingJobId: jobId });
    },
    async servesAnywhere(teamId, jobId) {
      try {
        const { deployments } = await client.listJobDeployments({ caller: { teamId }, trainingJobId: jobId });
        return deployments.some((d) => d.status === DeploymentStatus.ACTIVE);
      } catch (err) {
        // A job the router no longer knows (deleted) serves nowhere.
        if (err instanceof ConnectError && err.code === Code.NotFound) return false;
        throw err;
      }
    },
  };
}

/** Feedback datasets from the dataset service: cut a version of what is pending, for an adaptation asked for now. */
export function feedbackVersionsOverRpc(client: Client<typeof DatasetService>): FeedbackVersioner {
  return {
    async versionNow(teamId, projectId) {
      const res = await client.versionFeedback({ teamId, projectId });
      return res.cut && res.version ? res.version.versionNumber : null;
    },
  };
}
