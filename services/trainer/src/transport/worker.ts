import type { Client } from '@connectrpc/connect';
import type { BlobStore } from '@whetstone/blobs';
import { DECODER_BASE, trainDecoderLora, trainModel, type CanonicalRow, type LeasedJobLike } from './deps';
import type { TrainerService } from '@whetstone/proto/training/v1';

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WorkerDeps {
  orchestrator: Client<typeof TrainerService>;
  blobs: BlobStore;
  logger: Logger;
  trainerId: string;
}

const readJsonl = async (blobs: BlobStore, bucket: string, key: string): Promise<CanonicalRow[]> => {
  const chunks: Buffer[] = [];
  for await (const chunk of await blobs.get(bucket, key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as CanonicalRow);
};

const readBytes = async (blobs: BlobStore, bucket: string, key: string): Promise<Uint8Array> => {
  const chunks: Buffer[] = [];
  for await (const chunk of await blobs.get(bucket, key)) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
};

/**
 * A stateless worker: lease a job, train it with packages/ml, stream progress,
 * logs and checkpoints back, heartbeat, and stop within a second when told.
 */
export class Worker {
  private stopping = false;
  private current: AbortController | null = null;

  constructor(private readonly deps: WorkerDeps) {}

  /** Lease and run jobs until stop() is called. */
  async run(): Promise<void> {
    while (!this.stopping) {
      let job: LeasedJobLike | undefined;
      try {
        job = (
          await this.deps.orchestrator.leaseJob(
            { trainerId: this.deps.trainerId, waitMs: 5_000 },
            { timeoutMs: 15_000 },
          )
        ).job;
      } catch (err) {
        // Expected while the orchestrator starts or restarts: one line, no stack.
        this.deps.logger.warn(
          { reason: err instanceof Error ? err.message : String(err) },
          'could not reach the orchestrator; retrying',
        );
        await new Promise((r) => setTimeout(r, 1_000));
        continue;
      }
      if (job?.jobId) await this.runJob(job);
    }
  }

  /** Stops after aborting the current job (its lease expires and another trainer resumes it). */
  stop(): void {
    this.stopping = true;
    this.current?.abort();
  }

  private async runJob(job: LeasedJobLike): Promise<void> {
    const { orchestrator, blobs, logger } = this.deps;
    const lease = { jobId: job.jobId, leaseToken: job.leaseToken };
    const controller = new AbortController();
    this.current = controller;
    const source = `trainer/${this.deps.trainerId}`;
    let pending: { level: string; message: string }[] = [];
    const flushLogs = async () => {
      if (!pending.length) return;
      const lines = pending;
      pending = [];
      const res = await orchestrator.appendLogs({ ...lease, source, lines }).catch(() => ({ cancel: false }));
      if (res.cancel) controller.abort();
    };
    const log = (level: 'info' | 'warn' | 'error', message: string) => {
      pending.push({ level, message });
    };
    const beat = setInterval(
      () => {
        void orchestrator.heartbeat(lease).then(
          (r) => r.cancel && controller.abort(),
          () => undefined,
        );
        void flushLogs();
      },
      Math.max(500, Math.min(5_000, job.leaseMs / 4)),
    );
    const started = Date.now();
    logger.info({ jobId: job.jobId, attempt: job.attempt }, 'training job leased');
    try {
      log('info', `loading ${job.trainKeys.length} dataset(s)`);
      const train = (await Promise.all(job.trainKeys.map((k) => readJsonl(blobs, job.datasetBucket, k)))).flat();
      const heldout = (await Promise.all(job.heldoutKeys.map((k) => readJsonl(blobs, job.datasetBucket, k)))).flat();
      const resumeFrom = job.resumeKey ? await readBytes(blobs, job.artifactBucket, job.resumeKey) : undefined;
      log(
        'info',
        `${train.length} training rows, ${heldout.length} held-out rows${resumeFrom ? `; resuming from ${job.resumeKey.split('/').slice(-2).join('/')}` : ''}`,
      );
      let lastProgress = 0;
      const hooks = {
        ...(resumeFrom ? { resumeFrom } : {}),
        signal: controller.signal,
        onLog: log,
        onProgress: (p: {
          step: number;
          totalSteps: number;
          epoch: number;
          loss: number;
          learningRate: number;
          examplesPerSecond: number;
          etaSeconds: number;
        }) => {
          const now = Date.now();
          if (now - lastProgress < 250 && p.step < p.totalSteps) return;
          lastProgress = now;
          log(
            'info',
            `step ${p.step}/${p.totalSteps} epoch ${p.epoch} loss ${p.loss.toFixed(4)} ${p.examplesPerSecond} examples/s ETA ${p.etaSeconds}s`,
          );
          void orchestrator
            .reportProgress({
              ...lease,
              step: BigInt(p.step),
              totalSteps: BigInt(p.totalSteps),
              epoch: p.epoch,
              loss: p.loss,
              learningRate: p.learningRate,
              examplesPerSecond: p.examplesPerSecond,
              etaSeconds: p.etaSeconds,
            })
            .then(
              (r) => r.cancel && controller.abort(),
              () => undefined,
            );
        },
        onCheckpoint: async (c: { id: string; type: 'training' | 'sampler'; step: number; bytes: Uint8Array }) => {
          const key = `${job.artifactPrefix}checkpoints/${c.id.replace('/', '-')}.ckpt`;
          const stored = await blobs.put(job.artifactBucket, key, Buffer.from(c.bytes));
          const res = await orchestrator.putCheckpoint({
            ...lease,
            checkpointId: c.id,
            checkpointType: c.type,
            step: BigInt(c.step),
            key,
            sizeBytes: BigInt(stored.size),
          });
          if (res.cancel) controller.abort();
        },
      };
      const hyperparameters = { nrEpochs: job.nrEpochs, learningRate: job.learningRate, seed: Number(job.seed) };
      // Decoders fine-tune with LoRA only, on chat rows; extraction models on canonical rows.
      const result =
        job.baseModel === DECODER_BASE
          ? await trainDecoderLora({
              train,
              heldout,
              hyperparameters: { ...hyperparameters, batchSize: 4, loraRank: 4 },
              ...hooks,
            })
          : await trainModel({
              baseModel: job.baseModel,
              trainingType: job.trainingType === 'full' ? 'full' : 'lora',
              train,
              heldout,
              hyperparameters,
              ...hooks,
            });
      await flushLogs();
      const key = `${job.artifactPrefix}model.bundle`;
      const stored = await blobs.put(job.artifactBucket, key, Buffer.from(result.bundle));
      const exampleEpochs = train.length * job.nrEpochs;
      await orchestrator.completeJob({
        ...lease,
        artifactKey: key,
        artifactSize: BigInt(stored.size),
        metrics: result.metrics as never,
        exampleEpochs: BigInt(exampleEpochs),
      });
      logger.info(
        { jobId: job.jobId, metrics: result.metrics, seconds: (Date.now() - started) / 1000 },
        'training job complete',
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (controller.signal.aborted) {
        logger.info({ jobId: job.jobId }, 'training job stopped');
      } else {
        log('error', `training failed: ${message}`);
        await flushLogs();
        // Data and engine errors will not go away by retrying; infrastructure errors might.
        const retryable = !/rows have neither|not a training checkpoint|does not match|invalid|JSON/i.test(message);
        await orchestrator.failJob({ ...lease, reason: message, retryable }).catch(() => undefined);
        logger.warn({ jobId: job.jobId, err: message }, 'training job failed');
      }
    } finally {
      clearInterval(beat);
      this.current = null;
    }
  }
}
