export * from './logger';
export { initTelemetry } from './tracing';
