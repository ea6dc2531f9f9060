import { Reasons, errors } from '@whetstone/errors';
import type { Caller as PbCaller } from '@whetstone/proto/common/v1';

/** The principal a public request acts for, as use cases see it. */
export interface TeamCaller {
  teamId: string;
  /** Empty for dashboard-session calls. */
  keyId: string;
  userId: string;
}

/**
 * Maps `whetstone.common.v1.Caller` to a use case's caller. The gateway always
 * sets it; a request without a team is a bug in the calling service, refused
 * as InvalidArgument rather than acting for nobody.
 */
export function requireCaller(caller: PbCaller | undefined): TeamCaller {
  if (!caller?.teamId) {
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'caller.team_id is required', [
      { field: 'caller.team_id', message: 'required' },
    ]);
  }
  return { teamId: caller.teamId, keyId: caller.keyId, userId: caller.userId };
}
