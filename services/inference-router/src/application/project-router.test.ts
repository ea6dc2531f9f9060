import { AppError, Reasons, errors } from '@whetstone/errors';
import { failsOver } from './project-router';

describe('failsOver', () => {
  it('when the pick is down, overloaded or warming, then the reference answers instead', () => {
    expect(failsOver(errors.unavailable('UPSTREAM_OVERLOADED', 'overloaded'))).toBe(true);
    expect(failsOver(errors.unavailable('DEPENDENCY_UNAVAILABLE', 'down'))).toBe(true);
    expect(failsOver(new AppError('TooEarly', Reasons.MODEL_WARMING, 'warming'))).toBe(true);
  });

  it('when the pick refuses the request or the caller is out of credits, then the error is the answer', () => {
    expect(failsOver(errors.invalid(Reasons.VALIDATION_FAILED, 'bad'))).toBe(false);
    expect(failsOver(new AppError('PaymentRequired', Reasons.DIRECT_MODEL_REQUIRES_CREDITS, 'pay'))).toBe(false);
    expect(failsOver(new AppError('ResourceExhausted', 'UPSTREAM_RATE_LIMITED', 'slow down'))).toBe(false);
    expect(failsOver(new Error('boom'))).toBe(false);
  });

  it('when the caller has gone away, then nothing fails over', () => {
    const aborted = AbortSignal.abort();
    expect(failsOver(errors.unavailable('DEPENDENCY_UNAVAILABLE', 'down'), aborted)).toBe(false);
  });
});
