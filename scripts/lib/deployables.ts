/**
 * Every deployable `pnpm start` knows how to run. Adding a service is one
 * entry here (plus its values entry in charts/whetstone). Entries whose
 * `services/<dir>/src/main.ts` does not exist yet are skipped.
 */
export interface Deployable {
  /** Folder under services/ and the prefix of its log lines. */
  name: string;
  /** Workspace package name, for `pnpm --filter`. */
  pkg: string;
  /** Its own Postgres schema, when it owns one; migrations run before start. */
  schema?: string;
  /** Listening port (HTTP for the gateway, gRPC otherwise); 0 for pure clients. */
  port: number;
  /** Prometheus port for gRPC services (the gateway serves /metrics itself). */
  metricsPort?: number;
  /** The `<SVC>_ADDR` variable other services use to reach it. */
  addrVar?: string;
  /** How many processes to run (trainers, model-servers). */
  replicas?: number;
}

export const DEPLOYABLES: Deployable[] = [
  {
    name: 'key-billing',
    pkg: '@whetstone/key-billing',
    schema: 'key_billing',
    port: 50051,
    metricsPort: 9451,
    addrVar: 'KEY_BILLING_ADDR',
  },
  {
    name: 'dataset',
    pkg: '@whetstone/dataset',
    schema: 'dataset',
    port: 50052,
    metricsPort: 9452,
    addrVar: 'DATASET_ADDR',
  },
  {
    name: 'training-orchestrator',
    pkg: '@whetstone/training-orchestrator',
    schema: 'training',
    port: 50053,
    metricsPort: 9453,
    addrVar: 'TRAINING_ORCHESTRATOR_ADDR',
  },
  {
    name: 'inference-router',
    pkg: '@whetstone/inference-router',
    schema: 'inference',
    port: 50054,
    metricsPort: 9454,
    addrVar: 'INFERENCE_ROUTER_ADDR',
  },
  {
    name: 'model-server',
    pkg: '@whetstone/model-server',
    port: 50055,
    metricsPort: 9455,
    addrVar: 'MODEL_SERVER_ADDR',
  },
  {
    name: 'inference-history',
    pkg: '@whetstone/inference-history',
    schema: 'history',
    port: 50056,
    metricsPort: 9456,
    addrVar: 'INFERENCE_HISTORY_ADDR',
  },
  { name: 'trainer', pkg: '@whetstone/trainer', port: 0, metricsPort: 9457, replicas: 1 },
  { name: 'gateway', pkg: '@whetstone/gateway', port: 8080 },
];
