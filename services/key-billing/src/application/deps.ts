import type { Clock, PasswordHasher, UnitOfWork } from '../domain/ports';

/** What every use case may use: ports only. */
export interface UseCaseDeps {
  uow: UnitOfWork;
  clock: Clock;
  passwords: PasswordHasher;
  /** The free plan's one-time allowance in micro-credits; FREE_ALLOWANCE_MICRO unless the operator configures it. */
  freeAllowanceMicro?: bigint;
}
