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
