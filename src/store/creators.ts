import { type Expression, type ExpressionBuilder, type Kysely, sql, type SqlBool } from 'kysely';
import { creatorNumericBounds } from '../domain/bounds.js';
import type { Page, PageArgs } from '../domain/cursors.js';
import type { CreatorFacet, FacetAnswer, FacetRequest } from '../domain/facets.js';
import type { CreatorIndexRow, CreatorKey } from '../domain/index-rows.js';
import { creatorOrders } from '../domain/orders.js';
import type { Creator } from '../domain/records.js';
import { genderFromCode, genderToCode } from '../domain/values.js';
import { parseInstant } from '../inputs/common.js';
import type { CreatorSearch } from '../inputs/creators.js';
import { creatorFacetSearch } from '../inputs/facets.js';
import { creatorColumns, type CreatorRow, type Database } from './database.js';
import { asText, rangeFacet, valueFacet } from './facets.js';
import { containsPattern, countMatches, fetchPage, prefixPattern, sortKey, type SortKey } from './paging.js';
import type { KeyLookup } from './key-batches.js';
import { anyOf, executePrepared } from './prepared.js';
import { centsOf, toCount, toDate, toDecimal } from './values.js';
import { lowerCase } from '../domain/text.js';

type CreatorsEb = ExpressionBuilder<Database, 'creators'>;

function whereCreators(search: CreatorSearch) {
  const { filter } = search;
  return (eb: CreatorsEb): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [eb('creators.platform', '=', search.platform)];
    if (filter.query) {
      const pattern = containsPattern(filter.query);
      conditions.push(
        eb.or([eb(sql`lower(creators.username)`, 'like', pattern), eb(sql`lower(creators.full_name)`, 'like', pattern)]),
      );
    }
    if (search.categoryIds) {
      conditions.push(sql<SqlBool>`creators.category_ids && ${sql.val(search.categoryIds)}::integer[]`);
    }
    if (filter.locations?.length) {
      conditions.push(eb('creators.country', 'in', filter.locations.map((c) => c.toUpperCase())));
    }
    if (filter.languages?.length) {
      conditions.push(eb('creators.language', 'in', filter.languages.map((c) => c.toLowerCase())));
    }
    for (const [minKey, maxKey, column] of creatorNumericBounds) {
      const min = minKey ? filter[minKey] : null;
      const max = filter[maxKey];
      if (min != null) conditions.push(eb(`creators.${column}`, '>=', min));
      if (max != null) conditions.push(eb(`creators.${column}`, '<=', max));
    }
    if (filter.createAtStart) conditions.push(eb('creators.last_publish_at', '>=', parseInstant(filter.createAtStart)!.start));
    if (filter.createAtEnd) conditions.push(eb('creators.last_publish_at', '<', parseInstant(filter.createAtEnd)!.endExclusive));
    if (filter.gender) conditions.push(eb('creators.gender', '=', genderToCode(filter.gender)));
    if (filter.hasEmail) conditions.push(eb('creators.has_email', '=', true));
    if (filter.verified) conditions.push(eb('creators.is_verified', '=', true));
    return eb.and(conditions);
  };
}

/** The creator orders (src/domain/orders.ts) in SQL. */
export function creatorOrder(search: CreatorSearch): SortKey {
  const id = sql`creators.user_id`;
  const followers = sql`creators.follower_count`;
  const order = creatorOrders[search.sort];
  switch (search.sort) {
    case 'ENGAGEMENT_RATE':
      return sortKey(order, sql`creators.avg_engagement_rate`, id);
    case 'FOLLOWER_COUNT':
      return sortKey(order, followers, id);
    case 'RELEVANCE': {
      const q = lowerCase(search.filter.query ?? '');
      const rank = sql`(CASE WHEN lower(creators.username) = ${q} THEN 3
        WHEN lower(creators.username) LIKE ${prefixPattern(q)} THEN 2
        WHEN lower(creators.full_name) LIKE ${prefixPattern(q)} THEN 1 ELSE 0 END)`;
      return sortKey(order, rank, followers, id);
    }
  }
}

export async function searchCreators(db: Kysely<Database>, search: CreatorSearch, page: PageArgs): Promise<Page<Creator>> {
  const query = db.selectFrom('creators').selectAll('creators').where(whereCreators(search));
  const result = await fetchPage(query, creatorOrder(search), page);
  return { ...result, rows: result.rows.map(toCreator) };
}

export async function countCreators(db: Kysely<Database>, search: CreatorSearch): Promise<number> {
  return countMatches(db.selectFrom('creators').where(whereCreators(search)));
}

/** The facets of a search on the SQL path: one GROUP BY statement per facet, run together. */
export function creatorFacets(db: Kysely<Database>, search: CreatorSearch, requests: readonly FacetRequest<CreatorFacet>[]): Promise<FacetAnswer[]> {
  return Promise.all(
    requests.map((request): Promise<FacetAnswer> => {
      const matches = db.selectFrom('creators').where(whereCreators(creatorFacetSearch(search, request)));
      switch (request.facet) {
        case 'country':
          return valueFacet(matches, sql`creators.country`, asText);
        case 'language':
          return valueFacet(matches, sql`creators.language`, asText);
        case 'gender':
          return valueFacet(matches, sql`creators.gender`, (code) => genderFromCode(Number(code)).toLowerCase());
        case 'category':
          // Each id a creator carries, once per creator.
          return valueFacet(
            matches.innerJoin(sql`LATERAL (SELECT DISTINCT unnest(creators.category_ids) AS category_id)`.as('c') as never, (join) => join.onTrue()),
            sql`c.category_id`,
            asText,
          );
        case 'verified':
          return valueFacet(matches, sql`creators.is_verified`, asText);
        case 'hasEmail':
          return valueFacet(matches, sql`creators.has_email`, asText);
        case 'followerCount':
          return rangeFacet(matches, sql`creators.follower_count`, 'bigint', request.edges ?? []);
        case 'avgEngagementRate':
          return rangeFacet(matches, sql`creators.avg_engagement_rate`, 'numeric', request.edges ?? []);
      }
    }),
  );
}

export function toCreator(row: CreatorRow): Creator {
  const post = row.last_post;
  return {
    platform: row.platform,
    userId: row.user_id,
    username: row.username,
    fullName: row.full_name,
    avatar: row.avatar,
    country: row.country,
    language: row.language,
    gender: genderFromCode(row.gender),
    followerCount: toCount(row.follower_count),
    isVerified: row.is_verified,
    hasEmail: row.has_email,
    avgEngagementRate: toDecimal(row.avg_engagement_rate),
    avgVideoEngagementRate: toDecimal(row.avg_video_engagement_rate),
    avgCommentCount: toDecimal(row.avg_comment_count),
    avgLikeCount: toDecimal(row.avg_like_count),
    avgRetweetCount: toDecimal(row.avg_retweet_count),
    avgViewCount: toDecimal(row.avg_view_count),
    avgEngagementCount: toDecimal(row.avg_engagement_count),
    retweetRatio: toDecimal(row.retweet_ratio),
    replyRatio: toDecimal(row.reply_ratio),
    postCount: toCount(row.post_count),
    videoCount: toCount(row.video_count),
    lastPublishAt: toDate(row.last_publish_at),
    recentMonthPublishCount: row.recent_month_publish_count,
    recentWeekPublishCount: row.recent_week_publish_count,
    lastPost: post
      ? {
          postId: post.post_id,
          description: post.description,
          createAt: new Date(post.create_at),
          coverUrl: post.cover_url,
          likeCount: post.like_count,
          commentCount: post.comment_count,
          retweetCount: post.retweet_count,
          viewCount: post.view_count,
        }
      : null,
    evaluationMin: toDecimal(row.evaluation_min),
    evaluationMax: toDecimal(row.evaluation_max),
    categoryIds: row.category_ids,
    lastUpdateAt: row.last_update_at,
  };
}

function creatorIndexQuery(db: Kysely<Database>) {
  return db
    .selectFrom('creators')
    .select([
      'platform',
      'user_id',
      sql<string>`lower(username)`.as('username_lower'),
      sql<string>`lower(full_name)`.as('full_name_lower'),
      'country',
      'language',
      'gender',
      sql<number>`follower_count::float8`.as('followers'),
      'is_verified',
      'has_email',
      centsOf('avg_engagement_rate').as('engagement'),
      centsOf('avg_video_engagement_rate').as('video_engagement'),
      centsOf('avg_comment_count').as('comments'),
      centsOf('avg_like_count').as('likes'),
      centsOf('avg_view_count').as('views'),
      centsOf('avg_engagement_count').as('engagement_count'),
      centsOf('retweet_ratio').as('retweets'),
      'recent_month_publish_count',
      sql<number | null>`(extract(epoch from last_publish_at) * 1000)::float8`.as('last_publish_ms'),
      'category_ids',
    ]);
}

function toCreatorIndexRow(row: Awaited<ReturnType<ReturnType<typeof creatorIndexQuery>['execute']>>[number]): CreatorIndexRow {
  return {
    platform: row.platform,
    userId: row.user_id,
    username: row.username_lower,
    fullName: row.full_name_lower,
    country: row.country,
    language: row.language,
    gender: row.gender,
    followerCount: Number(row.followers),
    isVerified: row.is_verified,
    hasEmail: row.has_email,
    avgEngagementRate: Number(row.engagement),
    avgVideoEngagementRate: Number(row.video_engagement),
    avgCommentCount: Number(row.comments),
    avgLikeCount: Number(row.likes),
    avgViewCount: Number(row.views),
    avgEngagementCount: Number(row.engagement_count),
    retweetRatio: Number(row.retweets),
    recentMonthPublishCount: row.recent_month_publish_count,
    lastPublishAt: row.last_publish_ms === null ? NaN : Number(row.last_publish_ms),
    categoryIds: row.category_ids,
  };
}

/** A batch of index rows in key order, after `after` (a full load, read in one snapshot by the caller). */
export async function creatorIndexRows(db: Kysely<Database>, after: CreatorKey | null, limit: number): Promise<CreatorIndexRow[]> {
  let query = creatorIndexQuery(db).orderBy('platform').orderBy('user_id').limit(limit);
  if (after) query = query.where(sql<boolean>`(platform, user_id) > (${after.platform}, ${after.userId})`);
  return (await query.execute()).map(toCreatorIndexRow);
}

/** The index rows of the given keys that exist (a change feed batch). */
export async function creatorIndexRowsByKey(db: Kysely<Database>, keys: readonly CreatorKey[]): Promise<CreatorIndexRow[]> {
  const rows: CreatorIndexRow[] = [];
  for (const [platform, userIds] of groupByPlatform(keys)) {
    rows.push(...(await creatorIndexQuery(db).where('platform', '=', platform).where('user_id', 'in', userIds).execute()).map(toCreatorIndexRow));
  }
  return rows;
}

/** Creators by id on one platform, in no particular order (ids no longer stored are left out). */
export async function creatorsById(db: Kysely<Database>, userIds: readonly string[], platform: string): Promise<Creator[]> {
  if (userIds.length === 0) return [];
  return (await executePrepared(db, db.selectFrom('creators').select(creatorColumns).where('platform', '=', platform).where('user_id', '=', anyOf(userIds)))).map(toCreator);
}

/** Creators by user id within a platform (the group), one statement for an account's concurrent requests. */
export const creatorsByKey: KeyLookup<Creator> = { name: 'creators', read: creatorsById, keyOf: (creator) => creator.userId };

function groupByPlatform(keys: readonly CreatorKey[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { platform, userId } of keys) {
    const group = groups.get(platform);
    if (group) group.push(userId);
    else groups.set(platform, [userId]);
  }
  return groups;
}
