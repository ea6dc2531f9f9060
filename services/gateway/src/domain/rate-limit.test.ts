import { DEFAULT_RATE_LIMITS, preAuthChecks, requestChecks } from './rate-limit';

describe('rate-limit policy', () => {
  it('when an endpoint has its own limit, then it replaces the per-IP default and is scoped to the team first', () => {
    const checks = requestChecks(DEFAULT_RATE_LIMITS, 'POST', '/inference', {
      ip: '1.2.3.4',
      teamId: 't',
      keyId: 'k',
      userId: 'u',
    });
    expect(checks).toEqual([
      { rule: expect.objectContaining({ id: 'inference', limit: 5_000 }), scope: 'team', subject: 't' },
    ]);
  });

  it('when any of the four compatible surfaces is called, then they count against one shared per-team chat limit', () => {
    const caller = { ip: '1.2.3.4', teamId: 't', keyId: 'k', userId: 'u' };
    const paths = ['/v1/chat/completions', '/v1/completions', '/v1/responses', '/v1/messages'];
    const checks = paths.map((p) => requestChecks(DEFAULT_RATE_LIMITS, 'POST', p, caller));
    for (const [check] of checks)
      expect(check).toEqual({
        rule: { id: 'chat', limit: 5_000, windowSeconds: 60, code: 'chat_rate_limit' },
        scope: 'team',
        subject: 't',
      });
  });

  it('when embeddings or a fine-tuning job are asked for, then they share the inference and training-job budgets', () => {
    const caller = { ip: '1.2.3.4', teamId: 't', keyId: 'k', userId: 'u' };
    const idOf = (path: string) => requestChecks(DEFAULT_RATE_LIMITS, 'POST', path, caller)[0]?.rule.id;
    expect([idOf('/v1/embeddings'), idOf('/inference')]).toEqual(['inference', 'inference']);
    expect([idOf('/v1/fine_tuning/jobs'), idOf('/core/training-jobs')]).toEqual(['training_jobs', 'training_jobs']);
  });

  it('when the caller is anonymous, then an endpoint limit falls back to the IP', () => {
    const [check] = requestChecks(DEFAULT_RATE_LIMITS, 'POST', '/gliner-2/extract_entities', { ip: '1.2.3.4' });
    expect(check).toMatchObject({ scope: 'ip', subject: '1.2.3.4', rule: { limit: 15_000 } });
  });

  it('when an endpoint has no limit, then both per-IP windows apply', () => {
    const checks = requestChecks(DEFAULT_RATE_LIMITS, 'GET', '/list-api-keys', { ip: '1.2.3.4', teamId: 't' });
    expect(checks.map((c) => [c.rule.limit, c.rule.windowSeconds, c.scope])).toEqual([
      [20_000, 60, 'ip'],
      [1_000_000, 3600, 'ip'],
    ]);
  });

  it('when a route has no limit of its own, then edge and per-IP checks are consumed together before auth; otherwise only the edge', () => {
    expect(preAuthChecks(DEFAULT_RATE_LIMITS, 'GET', '/list-api-keys', '1.2.3.4').map((c) => c.rule.id)).toEqual([
      'edge',
      'ip_minute',
      'ip_hour',
    ]);
    expect(preAuthChecks(DEFAULT_RATE_LIMITS, 'POST', '/core/training-jobs', '1.2.3.4').map((c) => c.rule.id)).toEqual([
      'edge',
    ]);
  });
});
