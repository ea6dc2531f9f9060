import { ROOT_CONTEXT, context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from '../src';

function capture() {
  const lines: string[] = [];
  const logger = createLogger({
    service: 'test',
    level: 'info',
    destination: { write: (l: string) => void lines.push(l) },
  });
  return { logger, lines };
}

describe('logger', () => {
  it('when secrets appear in a log call, then none of them reach the output', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        password: 'hunter2-password',
        secret_key: 'wst_sk_secretsecretsecretsecretsecret01',
        hub_token: 'hf_tokentokentoken',
        download_url: 'http://blob/x?sig=abcdef',
        req: {
          headers: {
            authorization: 'Bearer wst_sk_bearerbearerbearerbearerbearer',
            'x-api-key': 'wst_sk_headerheaderheaderheaderheader',
            cookie: 'wst_session=sess',
          },
        },
        body: { password: 'nested-password', api_key: 'wst_sk_nestednestednestednestednested' },
      },
      'signed up',
    );
    const out = lines.join('\n');
    for (const secret of [
      'hunter2-password',
      'wst_sk_',
      'hf_tokentokentoken',
      'sig=abcdef',
      'wst_session=sess',
      'nested-password',
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[redacted]');
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'signed up', service: 'test' });
  });

  it('when a span is active, then log lines carry its trace and span ids', () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const { logger, lines } = capture();
    const ctx = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
    });
    context.with(ctx, () => logger.info('inside'));
    expect(JSON.parse(lines[0]!)).toMatchObject({
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      span_id: 'b7ad6b7169203331',
    });
  });
});

describe('logging during an outage', () => {
  /** A pg-like connection error; the port differs per attempt, as real ones do. */
  const refused = (port: number) =>
    Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED' });

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('when the same error is logged 10,000 times in 10 s, then 2 lines are written (it and a summary) and one stack', () => {
    const { logger, lines } = capture();
    for (let i = 0; i < 10_000; i++) {
      logger.error({ err: refused(40_000 + (i % 100)), procedure: 'x/Y' }, 'unhandled error in RPC handler');
      jest.advanceTimersByTime(1);
    }
    jest.advanceTimersByTime(10_000);
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ msg: 'unhandled error in RPC handler', err: { code: 'ECONNREFUSED' } });
    expect((entries[0]!.err as { stack?: string }).stack).toContain('ECONNREFUSED');
    expect(entries[1]).toMatchObject({
      level: 50,
      repeated: 9_999,
      window_s: 10,
      msg: '9999 more like this in the last 10 s: unhandled error in RPC handler',
    });
  });

  it('when an outage lasts a minute, then each distinct error writes at most 2 lines per 10 s and its stack once', () => {
    const { logger, lines } = capture();
    // Two failures, each 200 times a second for 60 s: 24,000 calls.
    for (let ms = 0; ms < 60_000; ms += 5) {
      logger.error({ err: refused(5432) }, 'unhandled error in RPC handler');
      logger.warn({ err: new Error('Connection terminated unexpectedly') }, 'outbox relay failed; retrying');
      jest.advanceTimersByTime(5);
    }
    jest.advanceTimersByTime(10_000);
    const entries = lines.map((l) => JSON.parse(l) as { msg: string; err?: { stack?: string }; repeated?: number });
    // The stated cap: 2 distinct failures × 6 windows × (first line + summary).
    expect(entries.length).toBeLessThanOrEqual(2 * 6 * 2);
    const full = entries.filter((e) => e.err?.stack && !e.err.stack.includes('(stack printed before)'));
    expect(full).toHaveLength(2);
    // Later windows still name the error, with a one-line stack.
    expect(entries.filter((e) => e.err?.stack?.endsWith('(stack printed before)')).length).toBeGreaterThan(0);
    expect(entries.find((e) => e.err?.stack?.endsWith('(stack printed before)'))?.err).toMatchObject({
      type: 'Error',
    });
    // Nothing is silently lost: written lines plus the counts in summaries account for every call.
    const accounted = entries.reduce((n, e) => n + (e.repeated ?? 1), 0);
    expect(accounted).toBe(24_000);
  });

  it('when info lines repeat, then every one is written (only warnings and errors are summarised)', () => {
    const { logger, lines } = capture();
    for (let i = 0; i < 50; i++) logger.info({}, 'request');
    expect(lines).toHaveLength(50);
  });
});
