import type { Principal } from '../application/ports';

/** The `whetstone.common.v1.Caller` every back-end call carries: whose team, key and user it is. */
export const callerOf = (p: Principal) => ({ teamId: p.teamId, keyId: p.keyId, userId: p.userId });
