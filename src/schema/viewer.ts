import { accountUsage } from '../store/accounts.js';
import { builder } from './builder.js';

interface ViewerInfo {
  accountId: string;
  plan: string;
  quotaAllowance: number;
  quotaUsed: number;
  quotaRemaining: number;
  subscriptionEndsAt: Date | null;
}

const Viewer = builder.objectRef<ViewerInfo>('Viewer').implement({
  description: "The caller's account: plan and quota (free to query)",
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
    type: Viewer,
    description: "The caller's plan and quota; costs nothing",
    resolve: async (_root, _args, ctx) => {
      const [usage] = await accountUsage(ctx.db, ctx.access.caller!.accountId);
      return usage;
    },
  }),
);
