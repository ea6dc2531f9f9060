/** In-memory fakes of the trainer's ports. */
import type { Failure } from '@whetstone/errors';
import { createLogger } from '@whetstone/telemetry';
import type { UseCaseDeps } from '../../src/application/deps';
import type { Artifacts, Orchestrator, Row, TrainingEngine, Work } from '../../src/application/ports';

export class FakeOrchestrator implements Orchestrator {
  readonly queue: Work[] = [];
  readonly logs: string[] = [];
  readonly checkpoints: { checkpointId: string; key: string }[] = [];
  completed: Parameters<Orchestrator['completeJob']>[1] | null = null;
  failed: Failure | null = null;
  evaluation: { metrics?: Record<string, unknown>; failure?: Failure } = {};
  /** When false, every answer says stop. */
  goOn = true;

  async leaseWork() {
    return this.queue.shift() ?? null;
  }
  async heartbeat() {
    return this.goOn;
  }
  async reportProgress() {
    return this.goOn;
  }
  async appendLogs(_lease: unknown, _source: string, lines: { message: string }[]) {
    this.logs.push(...lines.map((l) => l.message));
    return this.goOn;
  }
  async putCheckpoint(_lease: unknown, c: { checkpointId: string; key: string }) {
    this.checkpoints.push({ checkpointId: c.checkpointId, key: c.key });
    return this.goOn;
  }
  async completeJob(_lease: unknown, result: Parameters<Orchestrator['completeJob']>[1]) {
    this.completed = result;
  }
  async failJob(_lease: unknown, failure: Failure) {
    this.failed = failure;
  }
  async heartbeatEvaluation() {
    return this.goOn;
  }
  async completeEvaluation(_lease: unknown, metrics: Record<string, unknown>) {
    this.evaluation.metrics = metrics;
  }
  async failEvaluation(_lease: unknown, failure: Failure) {
    this.evaluation.failure = failure;
  }
}

export class FakeArtifacts implements Artifacts {
  readonly objects = new Map<string, Uint8Array>();
  rows(bucket: string, key: string, rows: unknown[]) {
    this.objects.set(`${bucket}/${key}`, Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n')));
  }
  async readRows(bucket: string, key: string): Promise<Row[]> {
    const text = Buffer.from(await this.readBytes(bucket, key)).toString('utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);
  }
  async readBytes(bucket: string, key: string) {
    const bytes = this.objects.get(`${bucket}/${key}`);
    if (!bytes) throw new Error(`no object ${bucket}/${key}`);
    return bytes;
  }
  async put(bucket: string, key: string, bytes: Uint8Array) {
    this.objects.set(`${bucket}/${key}`, bytes);
    return bytes.length;
  }
}

/** An engine that "trains" by counting rows, with one checkpoint and one progress report. */
export function fakeEngine(behaviour: { fail?: unknown; rejectResume?: unknown } = {}): TrainingEngine {
  return {
    async train(input, hooks) {
      if (behaviour.fail) throw behaviour.fail;
      if (behaviour.rejectResume && hooks.resumeFrom) throw behaviour.rejectResume;
      hooks.onProgress({
        step: 1,
        totalSteps: 1,
        epoch: 1,
        loss: 0.5,
        learningRate: 0.01,
        examplesPerSecond: 10,
        etaSeconds: 0,
      });
      await hooks.onCheckpoint({ id: 'weights/1', type: 'training', step: 1, bytes: new Uint8Array([1]) });
      return { bundle: new Uint8Array([7, 7]), manifest: { rows: input.train.length }, metrics: { f1: 0.5 } };
    },
    async evaluate(_bundle, rows) {
      if (behaviour.fail) throw behaviour.fail;
      return { f1: rows.length / 10 };
    },
  };
}

export function trainerDeps(engine = fakeEngine()) {
  const orchestrator = new FakeOrchestrator();
  const artifacts = new FakeArtifacts();
  const deps: UseCaseDeps = {
    orchestrator,
    artifacts,
    engine,
    logger: createLogger({ service: 'trainer-test', level: 'silent' }),
    trainerId: 't1',
  };
  return { deps, orchestrator, artifacts };
}
