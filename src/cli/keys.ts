import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { describeFields, fieldErrorsFromZod } from '../domain/errors.js';
import { parseInstant } from '../inputs/common.js';
import { newKeyOptions } from '../inputs/keys.js';
import { accountUsage, createAccountWithKey, issueKey, listKeys, rotateKey, setKeyStatus, UnknownPlanError } from '../store/accounts.js';
import type { Database } from '../store/database.js';
import { flags, UsageError, wholeNumber } from './main.js';
import { withStore } from './store.js';
import { keysSubcommands, usageLine } from './usage.js';

// `keys …` and `usage`. A raw key is printed once, alone on stdout (or as JSON with --json).
// Flags are checked before the store is opened: a typo answers at once, not after the embedded
// store's seconds of start-up (or its lock).
export async function keysCommand(config: Config, command: 'keys' | 'usage', args: string[]): Promise<number> {
  const work = command === 'usage' ? usageWork(args) : keysWork(args);
  return withStore(config, ({ db }) => work(db));
}

type Work = (db: Kysely<Database>) => Promise<number>;

/** An account's usage in the CLI's one spelling, snake_case as `keys list`, `keys create --json` and imports. */
const asPrinted = (usage: Awaited<ReturnType<typeof accountUsage>>[number]) => ({
  account_id: usage.accountId,
  plan: usage.plan,
  quota_allowance: usage.quotaAllowance,
  quota_used: usage.quotaUsed,
  quota_remaining: usage.quotaRemaining,
  subscription_ends_at: usage.subscriptionEndsAt,
});

function usageWork(args: string[]): Work {
  const { values, positionals } = flags(args, { account: { type: 'string' } }, usageLine('usage'));
  onlyFlags(positionals, usageLine('usage'));
  return async (db) => {
    const usage = await accountUsage(db, values.account);
    if (values.account && usage.length === 0) throw new UsageError(`no account ${values.account}`);
    const shown = usage.map(asPrinted);
    process.stdout.write(`${JSON.stringify(shown.length === 1 && values.account ? shown[0] : shown, null, 2)}\n`);
    return 0;
  };
}

function keysWork(args: string[]): Work {
  const [action, ...rest] = args;
  switch (action) {
    case 'create': {
      const { values, positionals } = flags(rest, {
        plan: { type: 'string' },
        quota: { type: 'string' },
        rate: { type: 'string' },
        expires: { type: 'string' },
        account: { type: 'string' },
        json: { type: 'boolean' },
      }, usageLine('keys', 'create'));
      onlyFlags(positionals, usageLine('keys', 'create'));
      const { json, ...raw } = values;
      const parsed = newKeyOptions.safeParse({
        ...raw,
        quota: wholeNumber('--quota', raw.quota, 'a whole number of units, 0 or more'),
        rate: wholeNumber('--rate', raw.rate, 'a whole number of requests per second, 1 or more'),
      });
      if (!parsed.success) throw new UsageError(describeFields(fieldErrorsFromZod(parsed.error).map((f) => ({ ...f, field: `--${f.field}` }))));
      const options = parsed.data;
      return async (db) => {
        const accountId = options.account;
        const issued = accountId
          ? await issueKey(db, accountId).catch((error) => {
              throw new UsageError(`no account ${accountId}: ${(error as Error).message.includes('foreign key') ? 'unknown id' : 'failed'}`);
            })
          : await createAccountWithKey(db, {
              plan: options.plan,
              quota: options.quota,
              ratePerSecond: options.rate,
              subscriptionEndsAt: options.expires ? parseInstant(options.expires)!.start : undefined,
            }).catch((error) => {
              throw error instanceof UnknownPlanError ? new UsageError(error.message) : error;
            });
        process.stdout.write(json ? `${JSON.stringify({ id: issued.id, account_id: issued.accountId, key: issued.key })}\n` : `${issued.key}\n`);
        return 0;
      };
    }
    case 'list': {
      const { values, positionals } = flags(rest, { account: { type: 'string' } }, usageLine('keys', 'list'));
      onlyFlags(positionals, usageLine('keys', 'list'));
      return async (db) => {
        const keys = await listKeys(db, values.account);
        // An account without keys lists none; an id that names no account is a mistake, said as `usage` says it.
        if (values.account && keys.length === 0 && (await accountUsage(db, values.account)).length === 0) throw new UsageError(`no account ${values.account}`);
        process.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
        return 0;
      };
    }
    case 'rotate': {
      const { values, positionals } = flags(rest, { json: { type: 'boolean' } }, usageLine('keys', 'rotate'));
      const keyId = keyIdFrom(positionals, usageLine('keys', 'rotate'));
      return async (db) => {
        const issued = await rotateKey(db, keyId);
        if (!issued) throw new UsageError(`no key ${keyId}`);
        process.stdout.write(values.json ? `${JSON.stringify({ id: issued.id, account_id: issued.accountId, key: issued.key })}\n` : `${issued.key}\n`);
        return 0;
      };
    }
    case 'disable':
    case 'enable':
    case 'delete': {
      const { positionals } = flags(rest, {}, usageLine('keys', action));
      const keyId = keyIdFrom(positionals, usageLine('keys', action));
      const status = action === 'disable' ? 'disabled' : action === 'enable' ? 'active' : 'deleted';
      return async (db) => {
        if (!(await setKeyStatus(db, keyId, status))) throw new UsageError(`no key ${keyId}`);
        process.stderr.write(`key ${keyId} ${status}\n`);
        return 0;
      };
    }
    default:
      throw new UsageError(
        `${action === undefined ? 'keys: name one of' : `unknown keys command ${JSON.stringify(action)}; one of`} ${keysSubcommands.join(', ')} (creator-data keys --help)`,
      );
  }
}

/** `keys create pro` meant `--plan pro`: a word where only flags go is refused, not ignored. */
function onlyFlags(positionals: string[], usage: string): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])} (usage: ${usage})`);
}

function keyIdFrom(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`give exactly one key id (usage: ${usage})`);
  return positionals[0];
}
