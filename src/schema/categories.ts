import type { Category } from '../domain/records.js';
import { categoriesArgs, categoryLookupArgs } from '../inputs/lookups.js';
import { builder } from './builder.js';
import type { Context } from './context.js';
import { NodeRef } from './node.js';

// The category taxonomy as a graph: read once per request that needs it (src/schema/loaders.ts),
// so parents, children and the categories of a whole page cost one statement together. To find a
// category's members, filter `creators` or `videos` by it: that is a search, priced as one.

const taxonomy = (ctx: Context) => ctx.loaders.taxonomy();

export const CategoryType = builder.objectRef<Category>('Category');

CategoryType.implement({
  description: 'A category of the taxonomy: level 1 (top) to 3; records carry level-2 and level-3 ids',
  interfaces: [NodeRef],
  fields: (t) => ({
    categoryId: t.exposeInt('categoryId'),
    name: t.exposeString('name'),
    level: t.exposeInt('level', { description: '1 (top) to 3' }),
    parent: t.field({
      type: CategoryType,
      nullable: true,
      description: 'null for a top-level category',
      resolve: async (category, _args, ctx) => (category.parentId === null ? null : ((await taxonomy(ctx)).byId.get(category.parentId) ?? null)),
    }),
    children: t.field({
      type: [CategoryType],
      description: 'In id order; empty for a level-3 category',
      resolve: async (category, _args, ctx) => (await taxonomy(ctx)).children.get(category.categoryId) ?? [],
    }),
  }),
});

/** The categories of these ids that exist, in the order given (ids no longer in the taxonomy are left out). */
export async function categoriesOf(ctx: Context, ids: readonly number[]): Promise<Category[]> {
  const { byId } = await taxonomy(ctx);
  return ids.flatMap((id) => byId.get(id) ?? []);
}

builder.queryField('categories', (t) =>
  t.field({
    type: [CategoryType],
    description: 'The taxonomy, in id order, optionally one level or the children of one category; costs nothing',
    args: { level: t.arg.int(), parentId: t.arg.int() },
    resolve: async (_root, rawArgs, ctx) => {
      const args = ctx.validated(categoriesArgs, rawArgs);
      return (await taxonomy(ctx)).all.filter(
        (category) => (args.level == null || category.level === args.level) && (args.parentId == null || category.parentId === args.parentId),
      );
    },
  }),
);

builder.queryField('category', (t) =>
  t.field({
    type: CategoryType,
    nullable: true,
    description: 'A category by id; null when there is none. 1 quota unit',
    args: { categoryId: t.arg.int({ required: true }) },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(categoryLookupArgs, rawArgs);
      await ctx.access.reserve('graph.lookup', info.path.key as string);
      return (await categoriesOf(ctx, [args.categoryId]))[0] ?? null;
    },
  }),
);
