export * from './logger';
export { RepeatLimiter, REPEAT_WINDOW_MS } from './repeat-limiter';
export { initTelemetry } from './tracing';
export * from './metrics';
export * from './lifecycle';
