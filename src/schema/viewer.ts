import { builder } from './builder.js';

interface ViewerInfo {
  accountId: string;
  plan: string;
  quotaRemaining: number;
}

const Viewer = builder.objectRef<ViewerInfo>('Viewer').implement({
  description: "The caller's account: plan and quota (free to query)",
  fields: (t) => ({
    accountId: t.exposeString('accountId'),
    plan: t.exposeString('plan'),
    quotaRemaining: t.expose('quotaRemaining', { type: 'SafeInt' }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: Viewer,
    resolve: async (_root, _args, ctx) => {
      const caller = ctx.access.caller!;
      return { accountId: caller.accountId, plan: caller.planId, quotaRemaining: (await ctx.access.quotaRemaining()) ?? 0 };
    },
  }),
);
