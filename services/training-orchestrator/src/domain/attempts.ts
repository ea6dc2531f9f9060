import { MAX_ATTEMPTS } from './job';

/**
 * What happens to leased work (a job or an evaluation) that failed or whose
 * lease expired: queued again while attempts remain and another attempt may
 * succeed, otherwise failed for good.
 */
export function afterFailure(attempts: number, retryable: boolean): 'retry' | 'fail' {
  return retryable && attempts < MAX_ATTEMPTS ? 'retry' : 'fail';
}
