import { AppError, INTERNAL_MESSAGE } from '@whetstone/errors';
import { classifyFailure } from './failure';

describe('classifyFailure', () => {
  it('when the error is a typed data error, then its reason and message are kept and it is not retried', () => {
    const err = new AppError('InvalidArgument', 'DATASET_ROWS_INVALID', 'train row 3 has no messages');
    expect(classifyFailure(err)).toEqual({
      code: 'DATASET_ROWS_INVALID',
      message: 'train row 3 has no messages',
      retryable: false,
    });
  });

  it('when the error is a typed infrastructure error, then it is retried', () => {
    const err = new AppError('Unavailable', 'DEPENDENCY_UNAVAILABLE', 'object storage is down');
    expect(classifyFailure(err)).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE', retryable: true });
  });

  it('when a dataset line is not JSON, then it is a data error with a fixed message, never the parser text', () => {
    let parseError: unknown;
    try {
      JSON.parse('{"text": oops');
    } catch (err) {
      parseError = err;
    }
    const failure = classifyFailure(parseError);
    expect(failure).toMatchObject({ code: 'DATASET_ROWS_INVALID', retryable: false });
    expect(failure.message).not.toContain('oops');
  });

  it('when the error is unknown, then it is INTERNAL with the generic message, retryable, and its text is not shown', () => {
    const failure = classifyFailure(new Error('ECONNRESET 10.0.0.7:9000 secret-bucket'));
    expect(failure).toEqual({ code: 'INTERNAL', message: INTERNAL_MESSAGE, retryable: true });
  });
});
