import type { Clock, PasswordHasher, UnitOfWork } from '../domain/ports';

/** What every use case may use: ports only. */
export interface UseCaseDeps {
  uow: UnitOfWork;
  clock: Clock;
  passwords: PasswordHasher;
}
