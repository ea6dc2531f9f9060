import { tracingEnabled } from '../src';

describe('tracingEnabled', () => {
  it('when no OTLP endpoint is set, then tracing is off', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
  });

  it('when the base or the traces endpoint is set, then tracing is on', () => {
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
  });

  it('when the SDK is disabled or the traces exporter is none, then an endpoint does not turn it on', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingEnabled({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingEnabled({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});
