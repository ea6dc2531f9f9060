import { decodeEvent, type EventEnvelope, Topics } from '@whetstone/events';
import { DatasetVersionReadySchema } from '@whetstone/proto/dataset/v1';

export const DATASETS_TOPIC = Topics.datasets;
export const DATASETS_CONSUMER = 'training-orchestrator.datasets';

/** datasets.v1 → each version that became ready (the adaptive loop reads its feedback datasets' corrections). */
export function datasetsConsumer(
  onReady: (ready: { teamId: string; datasetName: string; corrections: number }) => Promise<void>,
) {
  return async (event: EventEnvelope): Promise<void> => {
    const ready = decodeEvent(event, DatasetVersionReadySchema);
    if (ready) await onReady({ teamId: ready.teamId, datasetName: ready.datasetName, corrections: ready.corrections });
  };
}
