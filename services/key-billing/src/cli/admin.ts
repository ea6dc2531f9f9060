/**
 * `pnpm whetstone admin …`: operator tasks over internal gRPC (KeyBillingAdminService).
 * There is no public route for these; the service must be reachable at KEY_BILLING_ADDR.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { AppError } from '@whetstone/errors';
import {
  KeyBillingAdminService,
  LedgerEntryKind,
  Plan,
  type Account,
  type AccountSelector,
  type LedgerEntry,
} from '@whetstone/proto/keybilling/v1';
import { createRpcClient } from '@whetstone/rpc';
import { loadAdminCliEnv, type AdminCliEnv } from '../config';
import { formatCredits, parseCredits } from '../domain/money';

type AdminClient = Client<typeof KeyBillingAdminService>;

/** Where output goes and what environment is read; tests pass their own. */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: AdminCliEnv;
}

const defaultIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: loadAdminCliEnv(),
};

/** Where `pnpm start` keeps per-installation secrets (the default --data-dir). */
const LOCAL_SECRETS = path.resolve(__dirname, '../../../../.data/secrets.json');

/** ADMIN_TOKEN from the environment, else the one `pnpm start` generated for this checkout. */
function adminToken(env: AdminCliEnv): string | undefined {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  if (!existsSync(LOCAL_SECRETS)) return undefined;
  try {
    const token = (JSON.parse(readFileSync(LOCAL_SECRETS, 'utf8')) as { ADMIN_TOKEN?: unknown }).ADMIN_TOKEN;
    return typeof token === 'string' ? token : undefined;
  } catch {
    return undefined;
  }
}

class UsageError extends Error {}

const ACCOUNT_HELP = '  --team <id>          the team id\n  --email <address>    or the email of a team member\n';
/** `--data-dir` and `--port-offset` are read by scripts/whetstone.ts, which sets KEY_BILLING_ADDR and ADMIN_TOKEN from them. */
const COMMON_HELP = `  --data-dir <dir>     the --data-dir of the \`pnpm start\` to talk to (default: .data): key-billing's
                       address is read from <dir>/run.json, the admin token from <dir>/secrets.json
  --port-offset <n>    when no system is running from that data dir: key-billing at 127.0.0.1:(50051 + n)
  --addr <host:port>   key-billing's address (default: $KEY_BILLING_ADDR, else as above)
  -h, --help           show this help
`;

/** What to do when key-billing does not answer at `addr`: most often the system runs from another data dir. */
const UNREACHABLE_HINT =
  'The admin CLI talks to the system `pnpm start` runs from the same data dir. If it was started with ' +
  '`--data-dir <dir>`, pass the same `--data-dir <dir>` here: the address is read from <dir>/run.json, ' +
  "written while that system runs. Or give key-billing's address with --addr or KEY_BILLING_ADDR.";

interface Command {
  summary: string;
  usage: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  run(client: AdminClient, values: Record<string, string | boolean | undefined>, io: CliIo): Promise<void>;
}

const accountOptions = { team: { type: 'string' }, email: { type: 'string' } } as const;

function selector(values: Record<string, unknown>): AccountSelector {
  const team = values.team as string | undefined;
  const email = values.email as string | undefined;
  if (!!team === !!email) throw new UsageError('give exactly one of --team or --email');
  return (
    team ? { selector: { case: 'teamId', value: team } } : { selector: { case: 'email', value: email! } }
  ) as AccountSelector;
}

function credits(value: unknown, flag: string): bigint {
  const micro = typeof value === 'string' ? parseCredits(value) : null;
  if (micro === null) throw new UsageError(`${flag} must be a number of credits (up to 6 decimals)`);
  return micro;
}

function yesNo(value: unknown, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'yes' || value === 'on' || value === 'true') return true;
  if (value === 'no' || value === 'off' || value === 'false') return false;
  throw new UsageError(`${flag} must be yes or no`);
}

const KIND_LABEL: Record<LedgerEntryKind, string> = {
  [LedgerEntryKind.UNSPECIFIED]: '?',
  [LedgerEntryKind.SIGNUP_ALLOWANCE]: 'signup allowance',
  [LedgerEntryKind.GRANT]: 'grant',
  [LedgerEntryKind.PLAN_RENEWAL]: 'plan renewal',
  [LedgerEntryKind.USAGE]: 'usage',
  [LedgerEntryKind.OVERAGE_INVOICED]: 'overage invoiced',
  [LedgerEntryKind.ADJUSTMENT]: 'adjustment',
};

function describeAccount(account: Account | undefined): string {
  if (!account?.team) return '(no account)\n';
  const { team } = account;
  const plan =
    team.plan === Plan.PAID
      ? `paid: ${formatCredits(account.includedMicroCredits)} credits included per month, overage ${
          account.overageEnabled ? `on up to ${formatCredits(account.overageCeilingMicroCredits)} credits` : 'off'
        }, payment method ${account.paymentMethodVerified ? 'verified' : 'not verified'}`
      : 'free (one-time allowance)';
  const lines = [
    ['Team', `${team.name} (${team.id})`],
    ['Plan', plan],
    ['Balance', `${formatCredits(account.balanceMicroCredits)} credits`],
    ['Used in ' + account.billingMonth, `${formatCredits(account.usedThisMonthMicroCredits)} credits`],
    ...(team.plan === Plan.PAID
      ? [
          ['Overage used', `${formatCredits(account.overageUsedMicroCredits)} credits`],
          ['Last renewed', account.lastRenewedMonth || 'never'],
        ]
      : []),
    ['Blocked', team.blocked ? `yes (${team.blockedReason})` : 'no'],
  ];
  return lines.map(([k, v]) => `${k!.padEnd(16)}${v}\n`).join('');
}

function describeEntry(entry: LedgerEntry): string {
  const when = entry.createdAt
    ? new Date(Number(entry.createdAt.seconds) * 1000).toISOString().replace('.000Z', 'Z')
    : '';
  const amount = (entry.amountMicroCredits >= 0n ? '+' : '') + formatCredits(entry.amountMicroCredits);
  return `  ${when}  ${KIND_LABEL[entry.kind].padEnd(17)}${amount.padStart(14)}  balance ${formatCredits(entry.balanceAfterMicroCredits)}${entry.note ? `  ${entry.note}` : ''}\n`;
}

const COMMANDS: Record<string, Command> = {
  'grant-credits': {
    summary: 'add credits to a team',
    usage: 'grant-credits (--team <id> | --email <address>) --credits <n> [--note <text>]',
    options: { ...accountOptions, credits: { type: 'string' }, note: { type: 'string' } },
    async run(client, values, io) {
      const res = await client.grantCredits({
        account: selector(values),
        microCredits: credits(values.credits, '--credits'),
        note: (values.note as string) ?? '',
      });
      io.out(`Granted ${formatCredits(res.entry?.amountMicroCredits ?? 0n)} credits.\n${describeAccount(res.account)}`);
    },
  },
  'set-plan': {
    summary: "change a team's plan and terms",
    usage:
      'set-plan (--team <id> | --email <address>) --plan free|paid [--included-credits <n>] [--overage yes|no] [--ceiling-credits <n>] [--card-verified yes|no]',
    options: {
      ...accountOptions,
      plan: { type: 'string' },
      'included-credits': { type: 'string' },
      overage: { type: 'string' },
      'ceiling-credits': { type: 'string' },
      'card-verified': { type: 'string' },
    },
    async run(client, values, io) {
      const plan = values.plan === 'free' ? Plan.FREE : values.plan === 'paid' ? Plan.PAID : null;
      if (plan === null) throw new UsageError('--plan must be free or paid');
      const res = await client.changePlan({
        account: selector(values),
        plan,
        ...(values['included-credits'] === undefined
          ? {}
          : { includedMicroCredits: credits(values['included-credits'], '--included-credits') }),
        ...(values['ceiling-credits'] === undefined
          ? {}
          : { overageCeilingMicroCredits: credits(values['ceiling-credits'], '--ceiling-credits') }),
        ...(values.overage === undefined ? {} : { overageEnabled: yesNo(values.overage, '--overage') }),
        ...(values['card-verified'] === undefined
          ? {}
          : { paymentMethodVerified: yesNo(values['card-verified'], '--card-verified') }),
      });
      io.out(`Plan updated.\n${describeAccount(res.account)}`);
    },
  },
  'adjust-balance': {
    summary: "credit or debit a team's balance, with a reason kept in the ledger",
    usage: 'adjust-balance (--team <id> | --email <address>) (--credit <n> | --debit <n>) --reason <text>',
    options: { ...accountOptions, credit: { type: 'string' }, debit: { type: 'string' }, reason: { type: 'string' } },
    async run(client, values, io) {
      if ((values.credit === undefined) === (values.debit === undefined))
        throw new UsageError('give exactly one of --credit or --debit');
      if (!values.reason) throw new UsageError('--reason is required (it is kept in the ledger)');
      const amount =
        values.credit === undefined ? -credits(values.debit, '--debit') : credits(values.credit, '--credit');
      const res = await client.adjustBalance({
        account: selector(values),
        microCredits: amount,
        reason: values.reason as string,
      });
      const moved = res.entry?.amountMicroCredits ?? 0n;
      io.out(
        `${moved >= 0n ? 'Credited' : 'Debited'} ${formatCredits(moved >= 0n ? moved : -moved)} credits.\n${describeAccount(res.account)}`,
      );
    },
  },
  'set-ceiling': {
    summary: "set a paid team's monthly overage ceiling (turns overage on unless --overage no)",
    usage: 'set-ceiling (--team <id> | --email <address>) --ceiling-credits <n> [--overage yes|no]',
    options: { ...accountOptions, 'ceiling-credits': { type: 'string' }, overage: { type: 'string' } },
    async run(client, values, io) {
      if (values['ceiling-credits'] === undefined) throw new UsageError('--ceiling-credits is required');
      const overage = yesNo(values.overage, '--overage');
      const res = await client.setOverageCeiling({
        account: selector(values),
        overageCeilingMicroCredits: credits(values['ceiling-credits'], '--ceiling-credits'),
        ...(overage === undefined ? {} : { overageEnabled: overage }),
      });
      io.out(`Overage ceiling set.\n${describeAccount(res.account)}`);
    },
  },
  block: {
    summary: "block a team's keys (billing or fraud review)",
    usage: 'block (--team <id> | --email <address>) --reason <text>',
    options: { ...accountOptions, reason: { type: 'string' } },
    async run(client, values, io) {
      if (!values.reason) throw new UsageError('--reason is required');
      const res = await client.setAccountBlocked({
        account: selector(values),
        blocked: true,
        reason: values.reason as string,
      });
      io.out(`Account blocked.\n${describeAccount(res.account)}`);
    },
  },
  unblock: {
    summary: 'unblock a team',
    usage: 'unblock (--team <id> | --email <address>)',
    options: { ...accountOptions },
    async run(client, values, io) {
      const res = await client.setAccountBlocked({ account: selector(values), blocked: false, reason: '' });
      io.out(`Account unblocked.\n${describeAccount(res.account)}`);
    },
  },
  renew: {
    summary: "renew paid teams' included credits for the current month (safe to repeat)",
    usage: 'renew [--now <ISO date>]',
    options: { now: { type: 'string' } },
    async run(client, values, io) {
      let now;
      if (values.now !== undefined) {
        const date = new Date(values.now as string);
        if (Number.isNaN(date.getTime())) throw new UsageError('--now must be an ISO 8601 date');
        now = timestampFromDate(date);
      }
      const res = await client.renewMonthly(now ? { now } : {});
      io.out(
        `Billing month ${res.billingMonth}: ${res.renewedCount} team(s) renewed, ${res.alreadyRenewedCount} already renewed.\n`,
      );
    },
  },
  show: {
    summary: "show a team's plan, balance, members and recent ledger",
    usage: 'show (--team <id> | --email <address>)',
    options: { ...accountOptions },
    async run(client, values, io) {
      const res = await client.getAccount({ account: selector(values) });
      io.out(describeAccount(res.account));
      io.out(`Members         ${res.members.map((m) => m.email).join(', ') || '(none)'}\nRecent ledger:\n`);
      io.out(res.recentEntries.map(describeEntry).join('') || '  (empty)\n');
    },
  },
};

const HELP = `Usage: pnpm whetstone admin <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(15)}${c.summary}`)
  .join('\n')}

Run \`pnpm whetstone admin <command> --help\` for a command's options.
Every command talks to the system \`pnpm start\` runs from the same data dir: give it the same
\`--data-dir <dir>\` (default: .data; key-billing's address is read from <dir>/run.json).
The admin token is $ADMIN_TOKEN, else the one \`pnpm start\` keeps in <dir>/secrets.json.
`;

function commandHelp(name: string, command: Command): string {
  const accounts = 'team' in command.options ? ACCOUNT_HELP : '';
  return `Usage: pnpm whetstone admin ${command.usage}\n\n${command.summary}\n\nOptions:\n${accounts}${COMMON_HELP}`;
}

function errorText(err: unknown, addr?: string): string {
  if (err instanceof AppError) {
    if (err.reason === 'DEPENDENCY_UNAVAILABLE' && addr)
      return `cannot reach key-billing at ${addr} (${err.message}). ${UNREACHABLE_HINT}`;
    return `${err.message} (${err.reason})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Run one admin command; returns the process exit code (0 ok, 1 failed, 2 usage). */
export async function runAdminCli(argv: string[], io: CliIo = defaultIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`error: unknown admin command '${name}'\n\n${HELP}`);
    return 2;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { ...command.options, addr: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    io.err(`error: ${errorText(err)}\n\n${commandHelp(name, command)}`);
    return 2;
  }
  if (values.help) {
    io.out(commandHelp(name, command));
    return 0;
  }
  const addr = (values.addr as string | undefined) ?? io.env.KEY_BILLING_ADDR ?? '127.0.0.1:50051';
  const token = adminToken(io.env);
  const client = createRpcClient(KeyBillingAdminService, {
    addr,
    caller: 'admin-cli',
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });
  try {
    await command.run(client, values, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\n\n${commandHelp(name, command)}`);
      return 2;
    }
    io.err(`error: ${errorText(err, addr)}\n`);
    return 1;
  }
}
