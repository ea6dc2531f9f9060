export * from './logger';
export { initTelemetry } from './tracing';
export * from './metrics';
export * from './lifecycle';
