import type { RequestHandler } from 'express';
import type { KeyBilling } from '../../application/ports';
import { authOf } from './auth';

/**
 * Gate paid work on the caller's credit balance before it starts: key-billing
 * answers with 402/403 billing denials, which the error table renders.
 */
export function requireSpendable(
  keyBilling: KeyBilling,
  priceMicroCredits: bigint | ((req: Parameters<RequestHandler>[0]) => bigint),
  directModel = false,
): RequestHandler {
  return async (req, res, next) => {
    const price = typeof priceMicroCredits === 'function' ? priceMicroCredits(req) : priceMicroCredits;
    await keyBilling.checkSpendable(authOf(res).principal.teamId, price, directModel);
    next();
  };
}
