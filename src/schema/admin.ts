import { z } from 'zod';
import { ApiError } from '../domain/errors.js';
import { parseInstant } from '../inputs/common.js';
import { newKeyOptions } from '../inputs/keys.js';
import { accountUsage, createAccountWithKey, issueKey, rotateKey, setKeyStatus, UnknownPlanError } from '../store/accounts.js';
import { builder } from './builder.js';
import type { Context } from './context.js';
import { AccountType } from './viewer.js';
import { inputFromZod } from './zod-input.js';

// Account and key administration, present only when ADMIN_TOKEN is set (src/schema/index.ts
// strips every `admin*` field and `Admin*` type from the public schema). The pipeline checks
// `Authorization: Admin <token>` before any of these run. Every mutation that changed something
// writes one `admin` log line (audit below).

type AdminAction = 'key.create' | 'key.rotate' | 'key.disable' | 'key.enable' | 'key.delete';

/** A new account's settings as the mutation gave them; one not given is the default (trial, the plan's). */
interface AccountSettings {
  plan?: string;
  quota?: number;
  rate?: number;
  /** The subscription end as stored (ISO 8601). */
  expires?: string;
}

interface AdminChange {
  action: AdminAction;
  keyId: string;
  accountId: string;
  /** key.create only: whether the key came with a new account (with `settings`) or joined one. */
  accountCreated?: boolean;
  settings?: AccountSettings;
}

/**
 * The audit trail of key administration: one `admin` line per mutation, written once its change
 * is in the database, so a refused or failed one writes none (its request line says why). Ids and
 * settings only: the raw key of a create or rotate is never handed to the log, redacted or not.
 */
function audit(ctx: Context, change: AdminChange): void {
  ctx.services.log.info('admin', { requestId: ctx.requestId, ...change });
}

const AdminNewKeyInput = inputFromZod('AdminNewKeyInput', newKeyOptions.shape, 'Options of `keys create`: a new account unless `account` is given');

const AdminIssuedKey = builder.objectRef<{ id: string; accountId: string; key: string }>('AdminIssuedKey').implement({
  description: 'A key as issued: the raw key is shown this once',
  fields: (t) => ({ id: t.exposeString('id'), accountId: t.exposeString('accountId'), key: t.exposeString('key') }),
});

const createKeyArgs = z.object({ input: newKeyOptions });

builder.mutationType({
  fields: (t) => ({
    adminCreateKey: t.field({
      type: AdminIssuedKey,
      args: { input: t.arg({ type: AdminNewKeyInput, required: true }) },
      resolve: async (_root, rawArgs, ctx) => {
        const { input } = ctx.validated(createKeyArgs, rawArgs);
        if (input.account) {
          const [account] = await accountUsage(ctx.db, input.account);
          if (!account) throw new ApiError('NOT_FOUND', `Not Found: no account ${input.account}`);
          const issued = await issueKey(ctx.db, input.account);
          audit(ctx, { action: 'key.create', keyId: issued.id, accountId: issued.accountId, accountCreated: false });
          return issued;
        }
        const expires = input.expires ? parseInstant(input.expires)!.start : undefined;
        const issued = await createAccountWithKey(ctx.db, {
          plan: input.plan,
          quota: input.quota,
          ratePerSecond: input.rate,
          subscriptionEndsAt: expires,
        }).catch((error) => {
          if (error instanceof UnknownPlanError) throw ApiError.badRequest([{ field: 'input.plan', message: error.message }]);
          throw error;
        });
        const settings: AccountSettings = { plan: input.plan, quota: input.quota, rate: input.rate, expires: expires?.toISOString() };
        audit(ctx, { action: 'key.create', keyId: issued.id, accountId: issued.accountId, accountCreated: true, settings });
        return issued;
      },
    }),
    adminRotateKey: t.field({
      type: AdminIssuedKey,
      args: { id: t.arg.string({ required: true }) },
      resolve: async (_root, { id }, ctx) => {
        const issued = await rotateKey(ctx.db, id);
        if (!issued) throw new ApiError('NOT_FOUND', `Not Found: no key ${id}`);
        // This process stops honouring the old value at once; others when the change is announced.
        ctx.services.access.forgetKeys();
        audit(ctx, { action: 'key.rotate', keyId: issued.id, accountId: issued.accountId });
        return issued;
      },
    }),
    ...Object.fromEntries(
      (
        [
          ['adminDisableKey', 'disabled', 'key.disable'],
          ['adminEnableKey', 'active', 'key.enable'],
          ['adminDeleteKey', 'deleted', 'key.delete'],
        ] as const
      ).map(([name, status, action]) => [
        name,
        t.boolean({
          args: { id: t.arg.string({ required: true }) },
          resolve: async (_root, { id }, ctx) => {
            const accountId = await setKeyStatus(ctx.db, id, status);
            if (accountId === null) throw new ApiError('NOT_FOUND', `Not Found: no key ${id}`);
            ctx.services.access.forgetKeys();
            audit(ctx, { action, keyId: id, accountId });
            return true;
          },
        }),
      ]),
    ),
  }),
});

builder.queryField('adminUsage', (t) =>
  t.field({
    type: [AccountType],
    description: 'Quota usage of one account, or of all',
    args: { accountId: t.arg.string() },
    resolve: (_root, { accountId }, ctx) => accountUsage(ctx.db, accountId ?? undefined),
  }),
);
