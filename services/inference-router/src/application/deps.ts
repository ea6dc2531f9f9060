import type { Logger } from '@whetstone/telemetry';
import type { Catalog, Restrictions } from '../domain/catalog';
import type {
  Billing,
  ChatBatchStore,
  Ids,
  Metering,
  ModelFleet,
  ProjectStore,
  TrainedModels,
  Upstreams,
} from './ports';

/** Everything the use cases share; built once in main.ts (or a test) and handed to buildApp. */
export interface RouterDeps {
  catalog: Catalog;
  restrictions: Restrictions;
  trained: TrainedModels;
  billing: Billing;
  fleet: ModelFleet;
  /** The operator's upstream providers (OpenAI- and Anthropic-compatible). */
  upstreams: Upstreams;
  metering: Metering;
  store: ProjectStore;
  /** Message batches and their requests. */
  batches: ChatBatchStore;
  ids: Ids;
  logger: Logger;
  now: () => Date;
  /** How long a deployment may take to warm before it fails. */
  warmTimeoutMs: number;
}
