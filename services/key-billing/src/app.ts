import type { ServiceRouter } from '@whetstone/rpc';
import type { Logger } from '@whetstone/telemetry';
import { KeyBillingAdminService, KeyBillingService } from '@whetstone/proto/keybilling/v1';
import type { EventEnvelope } from '@whetstone/events';
import type { UsageRecorded } from '@whetstone/proto/inference/v1';
import type { TrainingUsageRecorded } from '@whetstone/proto/training/v1';
import type { RecordUsageOutcome } from './application/billing';
import { renewMonthly } from './application/admin';
import type { UseCaseDeps } from './application/deps';
import {
  handleTrainingUsageRecorded,
  handleUsageEvents,
  handleUsageRecorded,
  handleUsageRecordedBatch,
} from './transport/events/usage-recorded.consumer';
import { keyBillingAdminHandler } from './transport/rpc/key-billing-admin.handler';
import { keyBillingHandler } from './transport/rpc/key-billing.handler';

export interface AppDeps extends UseCaseDeps {
  logger: Logger;
  /** When set, admin RPCs require it as a bearer token. */
  adminToken?: string | undefined;
}

/** The wired service: its RPC routes and its event handlers. No I/O happens here. */
export interface KeyBillingApp {
  registerRoutes(router: ServiceRouter): void;
  onUsageRecorded(event: UsageRecorded): Promise<RecordUsageOutcome>;
  onUsageRecordedBatch(events: UsageRecorded[]): Promise<RecordUsageOutcome[]>;
  onTrainingUsageRecorded(event: TrainingUsageRecorded): Promise<RecordUsageOutcome>;
  /** Whatever the usage topic delivered (UsageRecorded and TrainingUsageRecorded), debited in one transaction. */
  onUsageEvents(events: EventEnvelope[]): Promise<RecordUsageOutcome[]>;
  /** Renew paid plans for the current billing month; idempotent, so every replica may run it. */
  renewMonthly(now?: Date): Promise<{ billingMonth: string; renewed: number; alreadyRenewed: number }>;
}

export function buildApp(deps: AppDeps): KeyBillingApp {
  return {
    registerRoutes(router) {
      router.service(KeyBillingService, keyBillingHandler(deps));
      router.service(KeyBillingAdminService, keyBillingAdminHandler(deps, deps.adminToken, deps.logger));
    },
    onUsageRecorded: (event) => handleUsageRecorded(deps, event),
    onUsageRecordedBatch: (events) => handleUsageRecordedBatch(deps, events),
    onTrainingUsageRecorded: (event) => handleTrainingUsageRecorded(deps, event),
    onUsageEvents: (events) => handleUsageEvents(deps, events),
    renewMonthly: (now) => renewMonthly(deps, now ? { now } : {}),
  };
}
