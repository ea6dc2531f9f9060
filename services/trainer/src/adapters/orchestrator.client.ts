import type { Client } from '@connectrpc/connect';
import type { JsonObject } from '@bufbuild/protobuf';
import {
  CheckpointType,
  TrainingType,
  type LeaseWorkResponse,
  type TrainerService,
} from '@whetstone/proto/training/v1';
import type { Orchestrator, Work } from '../application/ports';

/** How long one LeaseWork call may take beyond its wait. */
const LEASE_TIMEOUT_MS = 15_000;

function workOf(res: LeaseWorkResponse): Work | null {
  const w = res.work;
  if (w.case === 'job') {
    const j = w.value;
    return {
      kind: 'job',
      ...j,
      trainingType: j.trainingType === TrainingType.FULL ? 'full' : 'lora',
      seed: Number(j.seed),
    };
  }
  if (w.case === 'evaluation') return { kind: 'evaluation', ...w.value };
  return null;
}

/** TrainerService over gRPC, in the trainer's plain shapes. */
export function orchestratorOverRpc(client: Client<typeof TrainerService>): Orchestrator {
  return {
    async leaseWork(trainerId, waitMs) {
      return workOf(await client.leaseWork({ trainerId, waitMs }, { timeoutMs: waitMs + LEASE_TIMEOUT_MS }));
    },
    async heartbeat(lease) {
      return !(await client.heartbeat(lease)).cancel;
    },
    async reportProgress(lease, p) {
      const res = await client.reportProgress({
        ...lease,
        step: BigInt(p.step),
        totalSteps: BigInt(p.totalSteps),
        epoch: p.epoch,
        loss: p.loss,
        learningRate: p.learningRate,
        examplesPerSecond: p.examplesPerSecond,
        etaSeconds: p.etaSeconds,
        ...(p.metrics ? { metrics: p.metrics as unknown as JsonObject } : {}),
      });
      return !res.cancel;
    },
    async appendLogs(lease, source, lines) {
      const pb = lines.map((l) => ({
        level: l.level,
        message: l.message,
        ...(l.metrics
          ? { metrics: { ...l.metrics, step: BigInt(l.metrics.step), totalSteps: BigInt(l.metrics.totalSteps) } }
          : {}),
      }));
      return !(await client.appendLogs({ ...lease, source, lines: pb })).cancel;
    },
    async putCheckpoint(lease, c) {
      const res = await client.putCheckpoint({
        ...lease,
        checkpointId: c.checkpointId,
        checkpointType: c.type === 'sampler' ? CheckpointType.SAMPLER : CheckpointType.TRAINING,
        step: BigInt(c.step),
        key: c.key,
        sizeBytes: BigInt(c.sizeBytes),
      });
      return !res.cancel;
    },
    async completeJob(lease, r) {
      await client.completeJob({
        ...lease,
        artifactKey: r.artifactKey,
        artifactSize: BigInt(r.artifactSize),
        manifestKey: r.manifestKey,
        metrics: r.metrics as JsonObject,
        exampleEpochs: BigInt(r.exampleEpochs),
      });
    },
    async failJob(lease, f) {
      await client.failJob({ ...lease, reason: f.message, code: f.code, retryable: f.retryable });
    },
    async heartbeatEvaluation(lease) {
      return !(await client.heartbeatEvaluation(lease)).cancel;
    },
    async completeEvaluation(lease, metrics) {
      await client.completeEvaluation({ ...lease, metrics: metrics as JsonObject });
    },
    async failEvaluation(lease, f) {
      await client.failEvaluation({ ...lease, reason: f.message, code: f.code, retryable: f.retryable });
    },
  };
}
