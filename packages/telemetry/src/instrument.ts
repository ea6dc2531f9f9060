/**
 * Import first in a composition root (`import '@whetstone/telemetry/instrument';`): it patches http, express,
 * pg and ioredis before anything requires them, when tracing is on (see `enableInstrumentations`).
 */
import { enableInstrumentations } from './tracing';

enableInstrumentations();
