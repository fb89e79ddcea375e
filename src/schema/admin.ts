import { z } from 'zod';
import { ApiError } from '../domain/errors.js';
import { parseInstant } from '../inputs/common.js';
import { newKeyOptions } from '../inputs/keys.js';
import { accountUsage, createAccount, issueKey, rotateKey, setKeyStatus, UnknownPlanError } from '../store/accounts.js';
import { builder } from './builder.js';
import { AccountType } from './viewer.js';
import { inputFromZod } from './zod-input.js';

// Account and key administration, present only when ADMIN_TOKEN is set (src/schema/index.ts
// strips every `admin*` field and `Admin*` type from the public schema). The pipeline checks
// `Authorization: Admin <token>` before any of these run.

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
        let accountId = input.account;
        if (!accountId) {
          accountId = await createAccount(ctx.db, {
            plan: input.plan,
            quota: input.quota,
            ratePerSecond: input.rate,
            subscriptionEndsAt: input.expires ? parseInstant(input.expires)!.start : undefined,
          }).catch((error) => {
            if (error instanceof UnknownPlanError) throw ApiError.badRequest([{ field: 'input.plan', message: error.message }]);
            throw error;
          });
        }
        const [account] = await accountUsage(ctx.db, accountId);
        if (!account) throw new ApiError('NOT_FOUND', `Not Found: no account ${accountId}`);
        return issueKey(ctx.db, accountId);
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
        return issued;
      },
    }),
    ...Object.fromEntries(
      (
        [
          ['adminDisableKey', 'disabled'],
          ['adminEnableKey', 'active'],
          ['adminDeleteKey', 'deleted'],
        ] as const
      ).map(([name, status]) => [
        name,
        t.boolean({
          args: { id: t.arg.string({ required: true }) },
          resolve: async (_root, { id }, ctx) => {
            if (!(await setKeyStatus(ctx.db, id, status))) throw new ApiError('NOT_FOUND', `Not Found: no key ${id}`);
            ctx.services.access.forgetKeys();
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
