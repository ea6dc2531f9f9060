import { AppError, Reasons, asDependencyUnavailable, toHttpError } from './index';

describe('asDependencyUnavailable', () => {
  it.each([
    ['Prisma cannot reach the server', Object.assign(new Error("Can't reach database server"), { code: 'P1001' })],
    [
      'Prisma: the server closed the connection',
      Object.assign(new Error('Server has closed the connection.'), { code: 'P1017' }),
    ],
    [
      'a raw query whose driver error is DatabaseNotReachable',
      Object.assign(new Error('Raw query failed'), {
        code: 'P2010',
        meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'DatabaseNotReachable' } } },
      }),
    ],
    [
      'Postgres terminating the connection (57P01)',
      Object.assign(new Error('terminating connection due to unexpected postmaster exit'), { code: '57P01' }),
    ],
    ['Postgres starting up (57P03)', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    ['a refused socket', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['pg losing the connection', new Error('Connection terminated unexpectedly')],
    ['a wrapped cause', new Error('query failed', { cause: new Error('Connection terminated unexpectedly') })],
    [
      'ioredis giving up',
      Object.assign(new Error('Reached the max retries per request limit (which is 2).'), {
        name: 'MaxRetriesPerRequestError',
      }),
    ],
  ])('when %s, then it is Unavailable with a Retry-After and renders as 503 {detail}', (_name, err) => {
    const mapped = asDependencyUnavailable(err);
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped).toMatchObject({ kind: 'Unavailable', reason: Reasons.DEPENDENCY_UNAVAILABLE });
    const res = toHttpError(err, 'generic');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body).toEqual({ detail: 'A backing service is temporarily unavailable' });
    expect(JSON.stringify(res.body)).not.toMatch(/5432|postmaster|ECONNREFUSED/);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('Unique constraint failed'), { code: 'P2002' })],
    ['a syntax error', Object.assign(new Error('syntax error at or near'), { code: '42601' })],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a typed error', new AppError('Internal', 'INTERNAL', 'boom', { cause: new Error('Connection terminated') })],
  ])('when %s, then it is not mapped (stays a 500 unless typed)', (_name, err) => {
    expect(asDependencyUnavailable(err)).toBeUndefined();
  });

  it('when an OpenAI-surface request meets a lost database, then it is 503 in the OpenAI envelope', () => {
    const res = toHttpError(Object.assign(new Error('x'), { code: 'P1001' }), 'openai');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: { type: expect.any(String), message: expect.any(String) } });
  });
});
