import { checkCursors } from '../domain/cursors.js';
import { ApiError, type FieldError } from '../domain/errors.js';
import type { CreatorFacet } from '../domain/facets.js';
import { creatorOrders } from '../domain/orders.js';
import { CREATOR_PLATFORM, type Creator, type LastPostItem } from '../domain/records.js';
import { creatorFilterShape, creatorsArgs, type CreatorSearch, creatorSort, defaultCreatorSort } from '../inputs/creators.js';
import { engagementFacetArgs, followerFacetArgs, valueFacetArgs } from '../inputs/facets.js';
import { creatorLookupArgs } from '../inputs/lookups.js';
import { expandCategoryIds } from '../store/categories.js';
import { countCreators, creatorFacets, creatorsByKey, searchCreators } from '../store/creators.js';
import { builder } from './builder.js';
import { categoriesOf, CategoryType } from './categories.js';
import { connectionType, pageArgs, searchConnection } from './connection.js';
import { facetsType, requestedFacets } from './facets.js';
import { Gender } from './gender.js';
import { platformKey } from './loaders.js';
import { NodeRef } from './node.js';
import { enumFromZod, inputFromZod } from './zod-input.js';

const CreatorSort = enumFromZod('CreatorSort', creatorSort);
const CreatorFilter = inputFromZod('CreatorFilter', creatorFilterShape, 'Creator search filters; bounds are inclusive');

const LastPost = builder.objectRef<LastPostItem>('LastPost').implement({
  fields: (t) => ({
    postId: t.exposeString('postId'),
    description: t.exposeString('description'),
    createAt: t.expose('createAt', { type: 'DateTime' }),
    coverUrl: t.exposeString('coverUrl'),
    likeCount: t.expose('likeCount', { type: 'SafeInt' }),
    commentCount: t.expose('commentCount', { type: 'SafeInt' }),
    retweetCount: t.expose('retweetCount', { type: 'SafeInt' }),
    viewCount: t.expose('viewCount', { type: 'SafeInt' }),
  }),
});

export const CreatorType = builder.objectRef<Creator>('Creator').implement({
  description: 'A creator account on the microblog platform, with summary metrics',
  interfaces: [NodeRef],
  fields: (t) => ({
    userId: t.exposeString('userId'),
    username: t.exposeString('username'),
    fullName: t.exposeString('fullName'),
    avatar: t.exposeString('avatar'),
    country: t.exposeString('country'),
    language: t.exposeString('language'),
    gender: t.expose('gender', { type: Gender }),
    followerCount: t.expose('followerCount', { type: 'SafeInt' }),
    isVerified: t.exposeBoolean('isVerified'),
    hasEmail: t.exposeBoolean('hasEmail'),
    avgEngagementRate: t.expose('avgEngagementRate', { type: 'Decimal', description: 'Percent' }),
    avgVideoEngagementRate: t.expose('avgVideoEngagementRate', { type: 'Decimal', description: 'Percent' }),
    avgCommentCount: t.expose('avgCommentCount', { type: 'Decimal' }),
    avgLikeCount: t.expose('avgLikeCount', { type: 'Decimal' }),
    avgRetweetCount: t.expose('avgRetweetCount', { type: 'Decimal' }),
    avgViewCount: t.expose('avgViewCount', { type: 'Decimal' }),
    avgEngagementCount: t.expose('avgEngagementCount', { type: 'Decimal', description: 'Likes + comments + reposts per post' }),
    retweetRatio: t.expose('retweetRatio', { type: 'Decimal', description: 'Percent' }),
    replyRatio: t.expose('replyRatio', { type: 'Decimal', description: 'Percent' }),
    postCount: t.expose('postCount', { type: 'SafeInt' }),
    videoCount: t.expose('videoCount', { type: 'SafeInt' }),
    lastPublishAt: t.expose('lastPublishAt', { type: 'DateTime', nullable: true }),
    recentMonthPublishCount: t.expose('recentMonthPublishCount', { type: 'SafeInt' }),
    recentWeekPublishCount: t.expose('recentWeekPublishCount', { type: 'SafeInt' }),
    lastPost: t.expose('lastPost', { type: LastPost, nullable: true }),
    evaluationMin: t.expose('evaluationMin', { type: 'Decimal', description: 'Estimated USD price of one sponsored post' }),
    evaluationMax: t.expose('evaluationMax', { type: 'Decimal', description: 'Estimated USD price of one sponsored post' }),
    categoryIds: t.exposeIntList('categoryIds'),
    categories: t.field({
      type: [CategoryType],
      description: 'The categories of categoryIds, in that order',
      resolve: (creator, _args, ctx) => categoriesOf(ctx, creator.categoryIds),
    }),
    lastUpdateAt: t.expose('lastUpdateAt', { type: 'DateTime', description: 'When the record was last collected or imported' }),
  }),
});

const CreatorFacets = facetsType<CreatorFacet>('CreatorFacets', "Exact counts of a creator search's matches", [
  { facet: 'country', description: 'By country code ("US")', args: valueFacetArgs },
  { facet: 'language', description: 'By language code ("en")', args: valueFacetArgs },
  { facet: 'gender', description: 'By gender ("male", "female", "unknown")', args: valueFacetArgs },
  { facet: 'category', description: 'By category id: each id a creator carries, once per creator; label: its name', args: valueFacetArgs, categoryLabels: true },
  { facet: 'verified', description: 'By verification ("true", "false")', args: valueFacetArgs },
  { facet: 'hasEmail', description: 'By contact details ("true", "false")', args: valueFacetArgs },
  { facet: 'followerCount', description: 'A follower histogram over the given edges', args: followerFacetArgs, edges: 'SafeInt' },
  { facet: 'avgEngagementRate', description: 'An engagement-rate histogram (percent) over the given edges', args: engagementFacetArgs, edges: 'Float' },
]);

const CreatorConnection = connectionType<Creator>('Creator', CreatorType, CreatorFacets);

builder.queryField('creators', (t) =>
  t.field({
    type: CreatorConnection,
    // Nullable so that one failing root field (quota, validation) leaves the others' data intact.
    nullable: true,
    description: 'Creator search (REST: POST /api/v1/search/twitter/user); 100 quota units',
    args: {
      filter: t.arg({ type: CreatorFilter }),
      sortBy: t.arg({ type: CreatorSort }),
      ...pageArgs(t.arg),
    },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(creatorsArgs, rawArgs);
      const filter = args.filter ?? {};
      const categoryIds = filter.categoryIds?.length ? await checkedCategories(ctx.readDb, filter.categoryIds) : null;
      const search: CreatorSearch = {
        platform: CREATOR_PLATFORM,
        filter,
        categoryIds,
        sort: args.sortBy ?? defaultCreatorSort(filter),
      };
      const order = creatorOrders[search.sort];
      checkCursors(order, args);
      const facets = requestedFacets(info, ctx, CreatorFacets);
      await ctx.access.reserve('search.creators', info.path.key as string);
      return searchConnection(info, ctx.services.search?.creators(search, args, facets, ctx.access.caller?.accountId) ?? null, {
        order,
        facets: { requested: facets, sql: (requests) => creatorFacets(ctx.readDb, search, requests) },
        rowsById: (ids) => ctx.lookup(creatorsByKey, search.platform, ids),
        idOf: (creator) => creator.userId,
        cache: ctx.services.search?.rows.creators(search.platform),
        sqlPage: () => searchCreators(ctx.readDb, search, args),
        sqlCount: () => countCreators(ctx.readDb, search),
      });
    },
  }),
);

builder.queryField('creator', (t) =>
  t.field({
    type: CreatorType,
    nullable: true,
    description: 'A creator of the microblog platform by user id (as creator search finds them); null when there is none. 1 quota unit',
    args: { userId: t.arg.string({ required: true }) },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(creatorLookupArgs, rawArgs);
      await ctx.access.reserve('graph.lookup', info.path.key as string);
      return ctx.loaders.creator.load(platformKey(CREATOR_PLATFORM, args.userId));
    },
  }),
);

// Category ids need the taxonomy, so this part of validation runs here, still before any charge.
async function checkedCategories(db: Parameters<typeof expandCategoryIds>[0], ids: number[]): Promise<number[]> {
  const check = await expandCategoryIds(db, ids);
  const fields: FieldError[] = [
    ...check.unknown.map((id) => ({ field: 'filter.categoryIds', message: `unknown category id ${id}` })),
    ...check.topLevel.map((id) => ({ field: 'filter.categoryIds', message: `${id} is a top-level category; use its level-2 or level-3 ids` })),
  ];
  if (fields.length > 0) throw ApiError.badRequest(fields);
  return check.expanded;
}
