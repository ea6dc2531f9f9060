export * from './logger';
export { RepeatLimiter, REPEAT_WINDOW_MS } from './repeat-limiter';
export { initTelemetry, tracingEnabled, enableInstrumentations } from './tracing';
export * from './metrics';
export * from './lifecycle';
export { ensureTraceContextPropagation } from './propagation';
