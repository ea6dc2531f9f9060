import { failureOf } from '@whetstone/errors';
import type { DeploymentRow } from '../domain/deployment';
import type { CatalogEntry } from '../domain/catalog';
import type { RouterDeps } from './deps';

/**
 * Warms deployments in the background: once the model is ready on its
 * model-server the deployment becomes active (replacing the previous one), or
 * failed with a reason safe to show users. One warm-up per deployment at a time.
 */
export class DeploymentWarmer {
  private readonly warming = new Set<string>();

  constructor(private readonly deps: RouterDeps) {}

  /** Deployments still warming (tests and shutdown wait for 0). */
  get inFlight(): number {
    return this.warming.size;
  }

  async warm(row: DeploymentRow, task: CatalogEntry['task']): Promise<void> {
    if (this.warming.has(row.id)) return;
    this.warming.add(row.id);
    const started = Date.now();
    try {
      await this.load(row, task);
      const activated = await this.deps.store.activate(row.id, this.deps.now());
      this.deps.logger.info(
        { deploymentId: row.id, projectId: row.projectId, ms: Date.now() - started, activated },
        'deployment active',
      );
    } catch (err) {
      // The stored reason is public (the deployment history shows it): never the raw text of an unknown error.
      const failure = failureOf(err);
      await this.deps.store
        .fail(row.id, failure.message, this.deps.now())
        .catch((e: unknown) =>
          this.deps.logger.warn({ err: e, deploymentId: row.id }, 'could not record a failed deployment'),
        );
      this.deps.logger.warn({ err, deploymentId: row.id, code: failure.code }, 'deployment failed');
    } finally {
      this.warming.delete(row.id);
    }
  }

  private async load(row: DeploymentRow, task: CatalogEntry['task']): Promise<void> {
    const ref = { modelId: row.trainingJobId, bucket: row.bundleBucket, key: row.bundleKey };
    if (task !== 'decoder') return this.deps.fleet.warm(ref, this.deps.warmTimeoutMs);
    // A decoder is warm once it has produced a token on its server.
    const probe = this.deps.fleet.generate(ref, [{ role: 'user', content: 'hi' }], {
      temperature: 0,
      topP: 1,
      maxTokens: 1,
      stop: [],
      seed: 0,
    });
    for await (const _ of probe.chunks) void _;
  }
}
