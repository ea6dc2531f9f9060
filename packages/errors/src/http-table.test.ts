import { AppError, Reasons, toHttpError } from './index';

describe('toHttpError', () => {
  it('when a validation error is rendered generically, then it is 422 {detail, errors}', () => {
    const err = new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, 'Request body failed validation', {
      fieldErrors: [{ field: 'base_model', message: 'Required', code: 'required' }],
    });
    const res = toHttpError(err, 'generic');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: 'Request body failed validation',
      errors: [{ field: 'base_model', message: 'Required', code: 'required' }],
    });
  });

  it('when an unknown error is rendered, then it is 500 {error, message} with no detail and no cause', () => {
    const res = toHttpError(new Error('db password is hunter2'), 'generic');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error', message: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
  });

  it('when the resource’s state conflicts (409), then the clients are told not to retry', () => {
    const err = new AppError('FailedPrecondition', 'MODEL_NOT_SERVABLE', 'Model x is a decoder model.');
    for (const surface of ['generic', 'openai', 'anthropic'] as const) {
      const res = toHttpError(err, surface);
      expect([res.status, res.headers['x-should-retry']]).toEqual([409, 'false']);
    }
  });

  it('when credits are exhausted, then it is 402 with code, message, resolution_url and x-should-retry false', () => {
    const err = new AppError('PaymentRequired', Reasons.OUT_OF_CREDITS, 'Your credit balance is exhausted.');
    const res = toHttpError(err, 'generic');
    expect(res.status).toBe(402);
    expect(res.headers['x-should-retry']).toBe('false');
    expect(res.body).toEqual({
      code: 'out_of_credits',
      message: 'Your credit balance is exhausted.',
      resolution_url: expect.any(String),
    });
  });

  it('when the request headers are too large, then it is 431 in each envelope', () => {
    const err = new AppError('PayloadTooLarge', Reasons.HEADERS_TOO_LARGE, 'Request headers too large');
    expect(toHttpError(err, 'generic')).toMatchObject({ status: 431, body: { detail: 'Request headers too large' } });
    expect(toHttpError(err, 'openai')).toMatchObject({
      status: 431,
      body: { error: { code: 'headers_too_large', type: 'invalid_request_error' } },
    });
    expect(toHttpError(err, 'anthropic')).toMatchObject({
      status: 431,
      body: { type: 'error', error: { type: 'request_too_large' } },
    });
  });

  it('when the overage ceiling is reached, then it is 403 credit_ceiling_reached', () => {
    const err = new AppError('PermissionDenied', Reasons.CREDIT_CEILING_REACHED, 'Monthly overage ceiling reached.');
    const res = toHttpError(err, 'openai');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: { code: 'credit_ceiling_reached', type: 'insufficient_quota' } });
  });

  it('when rate limited, then it is 429 with scope headers and body', () => {
    const err = new AppError('ResourceExhausted', Reasons.RATE_LIMITED, 'Too many requests', {
      retryAfterSeconds: 12.2,
      metadata: { scope: 'team', code: 'rate_limit_per_user' },
    });
    const res = toHttpError(err, 'generic');
    expect(res.status).toBe(429);
    expect(res.headers).toMatchObject({
      'retry-after': '13',
      'x-ratelimit-scope': 'team',
      'x-ratelimit-code': 'rate_limit_per_user',
    });
    expect(res.body).toEqual({ detail: 'Too many requests', code: 'rate_limit_per_user', scope: 'team' });
  });

  it('when a model is warming, then OpenAI bodies say model_warming and may retry, Anthropic bodies may not', () => {
    const err = new AppError('TooEarly', Reasons.MODEL_WARMING, 'Model is loading', { retryAfterSeconds: 90 });
    const openai = toHttpError(err, 'openai');
    expect(openai.status).toBe(425);
    expect(openai.headers).toMatchObject({ 'retry-after': '60', 'retry-after-ms': '60000', 'x-should-retry': 'true' });
    expect(openai.body).toMatchObject({ error: { code: 'model_warming' } });
    const anthropic = toHttpError(err, 'anthropic');
    expect(anthropic.headers['x-should-retry']).toBe('false');
    expect(anthropic.body).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Model is loading' } });
  });

  it('when an upstream is saturated, then messages get 529 overloaded_error and the other surfaces 503', () => {
    const err = new AppError('Unavailable', Reasons.UPSTREAM_OVERLOADED, 'Upstream is overloaded', {
      retryAfterSeconds: 2,
    });
    const anthropic = toHttpError(err, 'anthropic');
    expect(anthropic.status).toBe(529);
    expect(anthropic.headers['retry-after']).toBe('2');
    expect(anthropic.body).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Upstream is overloaded' },
    });
    const openai = toHttpError(err, 'openai');
    expect(openai.status).toBe(503);
    expect(openai.body).toMatchObject({ error: { code: 'upstream_overloaded', type: 'server_error' } });
    expect(toHttpError(err, 'generic').status).toBe(503);
    // Elsewhere, the version header picks Messages' envelope but not its status: 529 exists on that endpoint only.
    const header = toHttpError(err, 'anthropic', { messagesEndpoint: false });
    expect(header.status).toBe(503);
    expect(header.body).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });

  it('when credits are exhausted on the Messages surface, then its error carries code and resolution_url', () => {
    const err = new AppError('PaymentRequired', Reasons.OUT_OF_CREDITS, 'Your credit balance is exhausted.', {
      metadata: { resolution_url: '/dashboard#plans' },
    });
    expect(toHttpError(err, 'anthropic')).toMatchObject({
      status: 402,
      headers: { 'x-should-retry': 'false' },
      body: {
        type: 'error',
        error: {
          type: 'billing_error',
          message: 'Your credit balance is exhausted.',
          code: 'out_of_credits',
          resolution_url: '/dashboard#plans',
        },
      },
    });
    const warming = new AppError('TooEarly', Reasons.MODEL_WARMING, 'Model is loading');
    expect((toHttpError(warming, 'anthropic').body as { error: object }).error).not.toHaveProperty('code');
  });

  it('when a model is restricted, then it is 451', () => {
    expect(
      toHttpError(new AppError('PermissionDenied', Reasons.MODEL_RESTRICTED, 'restricted'), 'generic').status,
    ).toBe(451);
  });

  it('when an AppError crosses a process boundary, then it survives JSON', () => {
    const err = new AppError('NotFound', 'DATASET_NOT_FOUND', 'Dataset x not found', { metadata: { a: 'b' } });
    const back = AppError.fromJSON(JSON.parse(JSON.stringify(err)));
    expect(back).toMatchObject({
      kind: 'NotFound',
      reason: 'DATASET_NOT_FOUND',
      message: 'Dataset x not found',
      metadata: { a: 'b' },
    });
  });
});
