/** The gRPC services behind the gateway, each as its port with a readiness probe. */
import type { DescService } from '@bufbuild/protobuf';
import { DatasetService, FileService } from '@whetstone/proto/dataset/v1';
import { ConversationService, InferenceHistoryService } from '@whetstone/proto/history/v1';
import { ChatBatchService, InferenceRouterService } from '@whetstone/proto/inference/v1';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { AdaptiveService, TrainingService } from '@whetstone/proto/training/v1';
import { createHealthChecker, createRpcClient } from '@whetstone/rpc';
import type { Logger } from '@whetstone/telemetry';
import type { ConversationsPort, HistoryPort } from '../application/history-ports';
import { conversationsOverRpc } from './conversations.client';
import type { ChatBatches, DatasetsPort, FilesPort, Inference, KeyBilling, TrainingPort } from '../application/ports';
import { chatBatchesOverRpc } from './batches.client';
import type { GatewayConfig } from '../config';
import { datasetsOverRpc } from './dataset.client';
import { filesOverRpc } from './files.client';
import { historyOverRpc } from './history.client';
import { inferenceOverRpc } from './inference.client';
import { keyBillingOverRpc } from './key-billing.client';
import { trainingOverRpc } from './training.client';
import { adaptiveOverRpc } from './adaptive.client';
import type { AdaptivePort } from '../application/adaptive-ports';

export interface Backends {
  keyBilling: KeyBilling;
  /** Each optional back end is present only when its address is configured; its routes are mounted only then. */
  inference?: Inference;
  /** The router's message batches (the same address as inference). */
  chatBatches?: ChatBatches;
  datasets?: DatasetsPort;
  /** The OpenAI Files API's files (the dataset service's FileService, at the same address). */
  files?: FilesPort;
  training?: TrainingPort;
  adaptive?: AdaptivePort;
  history?: HistoryPort;
  /** OpenAI's conversations (inference-history's ConversationService, at the same address). */
  conversations?: ConversationsPort;
}

/** Clients only: connections open lazily on the first call. */
export function connectBackends(config: GatewayConfig, logger: Logger): Backends {
  const ready = (addr: string) => {
    const health = createHealthChecker({ addr, caller: 'gateway' });
    return () => health.check();
  };
  const client = <S extends DescService>(service: S, addr: string, timeoutMs?: number) =>
    createRpcClient(service, { addr, caller: 'gateway', logger, ...(timeoutMs ? { timeoutMs } : {}) });
  const backends: Backends = {
    keyBilling: keyBillingOverRpc(client(KeyBillingService, config.KEY_BILLING_ADDR), ready(config.KEY_BILLING_ADDR)),
  };
  const inferenceAddr = config.INFERENCE_ROUTER_ADDR;
  if (inferenceAddr) {
    backends.inference = inferenceOverRpc(client(InferenceRouterService, inferenceAddr, 60_000), ready(inferenceAddr));
    backends.chatBatches = chatBatchesOverRpc(client(ChatBatchService, inferenceAddr, 60_000));
  }
  const datasetAddr = config.DATASET_ADDR;
  if (datasetAddr) {
    backends.datasets = datasetsOverRpc(client(DatasetService, datasetAddr, 30_000), ready(datasetAddr));
    backends.files = filesOverRpc(client(FileService, datasetAddr, 60_000));
  }
  const trainingAddr = config.TRAINING_ORCHESTRATOR_ADDR;
  if (trainingAddr) {
    backends.training = trainingOverRpc(client(TrainingService, trainingAddr, 30_000), ready(trainingAddr));
    backends.adaptive = adaptiveOverRpc(client(AdaptiveService, trainingAddr, 30_000));
  }
  const historyAddr = config.INFERENCE_HISTORY_ADDR;
  // Reads of a just-returned inference id may wait a few seconds for ingestion (read your writes).
  if (historyAddr) {
    backends.history = historyOverRpc(client(InferenceHistoryService, historyAddr, 20_000), ready(historyAddr));
    backends.conversations = conversationsOverRpc(client(ConversationService, historyAddr, 20_000));
  }
  return backends;
}
