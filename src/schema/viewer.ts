import { accountUsage } from '../store/accounts.js';
import { builder } from './builder.js';

export const AccountType = builder.objectRef<Awaited<ReturnType<typeof accountUsage>>[number]>('Account').implement({
  description: 'An account: its plan and quota',
  fields: (t) => ({
    accountId: t.exposeString('accountId'),
    plan: t.exposeString('plan'),
    quotaAllowance: t.expose('quotaAllowance', { type: 'SafeInt' }),
    quotaUsed: t.expose('quotaUsed', { type: 'SafeInt' }),
    quotaRemaining: t.expose('quotaRemaining', { type: 'SafeInt' }),
    subscriptionEndsAt: t.expose('subscriptionEndsAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: AccountType,
    description: "The caller's plan and quota; costs nothing",
    resolve: async (_root, _args, ctx) => {
      const [usage] = await accountUsage(ctx.db, ctx.access.caller!.accountId);
      // Units this process leased but has not sold are not used yet, whatever the database says.
      const unsold = ctx.services.access.unsold(usage.accountId);
      return { ...usage, quotaUsed: usage.quotaUsed - unsold, quotaRemaining: usage.quotaRemaining + unsold };
    },
  }),
);
