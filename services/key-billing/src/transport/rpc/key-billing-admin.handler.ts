import { timingSafeEqual } from 'node:crypto';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { errors } from '@whetstone/errors';
import { KeyBillingAdminService } from '@whetstone/proto/keybilling/v1';
import type { Logger } from '@whetstone/telemetry';
import { changePlan, getAccount, grantCredits, renewMonthly, setAccountBlocked } from '../../application/admin';
import { adjustBalance } from '../../application/adjust-balance';
import type { UseCaseDeps } from '../../application/deps';
import { setOverageCeiling } from '../../application/set-overage-ceiling';
import { KeyBillingReasons as R } from '../../domain/reasons';
import { accountToPb, dateOf, ledgerEntryToPb, planChangeFromPb, selectorFromPb, userToPb } from './key-billing.mapper';

/** The metadata header operators send: `authorization: Bearer <ADMIN_TOKEN>`. */
export const ADMIN_TOKEN_HEADER = 'authorization';

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A check that a call carries the admin token; passes everything when none is configured. */
function adminGuard(adminToken: string | undefined): (context: HandlerContext) => void {
  return (context) => {
    if (!adminToken) return;
    const presented = (context.requestHeader.get(ADMIN_TOKEN_HEADER) ?? '').replace(/^Bearer\s+/i, '');
    if (!sameSecret(presented, adminToken))
      throw errors.unauthenticated(R.ADMIN_TOKEN_INVALID, 'A valid admin token is required.');
  };
}

/** KeyBillingAdminService, guarded by ADMIN_TOKEN when one is configured; every change is audit-logged. */
export function keyBillingAdminHandler(
  deps: UseCaseDeps,
  adminToken: string | undefined,
  logger: Logger,
): ServiceImpl<typeof KeyBillingAdminService> {
  const audit = logger.child({ audit: 'admin' });
  const guard = adminGuard(adminToken);
  return {
    ...balanceAdmin(deps, guard, audit),
    async changePlan(req, context) {
      guard(context);
      const account = await changePlan(deps, planChangeFromPb(req));
      audit.info(
        {
          teamId: account.team.id,
          plan: account.team.plan,
          included: String(account.includedMicroCredits),
          overage: account.overageEnabled,
        },
        'plan changed',
      );
      return { account: accountToPb(account) };
    },
    async setAccountBlocked(req, context) {
      guard(context);
      const account = await setAccountBlocked(deps, {
        account: selectorFromPb(req.account),
        blocked: req.blocked,
        reason: req.reason,
      });
      audit.info(
        { teamId: account.team.id, blocked: req.blocked, reason: req.reason },
        req.blocked ? 'account blocked' : 'account unblocked',
      );
      return { account: accountToPb(account) };
    },
    async renewMonthly(req, context) {
      guard(context);
      const now = dateOf(req.now);
      const result = await renewMonthly(deps, now ? { now } : {});
      audit.info(result, 'monthly renewal ran');
      return {
        billingMonth: result.billingMonth,
        renewedCount: result.renewed,
        alreadyRenewedCount: result.alreadyRenewed,
      };
    },
    async getAccount(req, context) {
      guard(context);
      const result = await getAccount(deps, { account: selectorFromPb(req.account) });
      return {
        account: accountToPb(result.account),
        members: result.members.map(userToPb),
        recentEntries: result.recent.map(ledgerEntryToPb),
      };
    },
  };
}

type AdminImpl = ServiceImpl<typeof KeyBillingAdminService>;

/** The RPCs that move a team's credits or its overage terms. */
function balanceAdmin(
  deps: UseCaseDeps,
  guard: (context: HandlerContext) => void,
  audit: Logger,
): Pick<AdminImpl, 'grantCredits' | 'adjustBalance' | 'setOverageCeiling'> {
  return {
    async grantCredits(req, context) {
      guard(context);
      const { account, entry } = await grantCredits(deps, {
        account: selectorFromPb(req.account),
        microCredits: req.microCredits,
        note: req.note,
      });
      audit.info(
        { teamId: account.team.id, microCredits: String(entry.amountMicroCredits), note: entry.note },
        'credits granted',
      );
      return { account: accountToPb(account), entry: ledgerEntryToPb(entry) };
    },
    async adjustBalance(req, context) {
      guard(context);
      const { account, entry } = await adjustBalance(deps, {
        account: selectorFromPb(req.account),
        microCredits: req.microCredits,
        reason: req.reason,
      });
      audit.info(
        { teamId: account.team.id, microCredits: String(entry.amountMicroCredits), reason: entry.note },
        'balance adjusted',
      );
      return { account: accountToPb(account), entry: ledgerEntryToPb(entry) };
    },
    async setOverageCeiling(req, context) {
      guard(context);
      const account = await setOverageCeiling(deps, {
        account: selectorFromPb(req.account),
        ceilingMicroCredits: req.overageCeilingMicroCredits,
        ...(req.overageEnabled === undefined ? {} : { overageEnabled: req.overageEnabled }),
      });
      audit.info(
        {
          teamId: account.team.id,
          ceiling: String(account.overageCeilingMicroCredits),
          overage: account.overageEnabled,
        },
        'overage ceiling set',
      );
      return { account: accountToPb(account) };
    },
  };
}
