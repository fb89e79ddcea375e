import { z } from 'zod';
import { type CreatorSort, creatorSorts } from '../domain/orders.js';
import {
  audienceFilterShape,
  checkConnectionArgs,
  checkOffsetWindow,
  checkRanges,
  connectionArgsShape,
  countryCodes,
  filterSchema,
  instant,
  INT32_MAX,
  languageCodes,
  metricBound,
  pageShape,
  searchQuery,
} from './common.js';

export const MAX_CATEGORY_IDS = 100;

// Creator search filters (contract §4.1), camelCase; the REST body uses the same names in snake_case.
export const creatorFilterShape = {
  query: searchQuery.nullish().describe('Case-insensitive substring of username or full name'),
  categoryIds: z
    .array(z.int().positive().max(INT32_MAX))
    .max(MAX_CATEGORY_IDS)
    .nullish()
    .describe('Level-2 and level-3 category ids, combined as a union; a level-2 id covers its children'),
  locations: countryCodes.nullish().describe('ISO 3166-1 alpha-2 country codes'),
  ...audienceFilterShape,
  avgPlayCountMin: metricBound.nullish().describe('Bounds the average view count'),
  avgPlayCountMax: metricBound.nullish().describe('Bounds the average view count'),
  createAtStart: instant.nullish().describe('Last publish time from (ISO 8601 date or date-time)'),
  createAtEnd: instant.nullish().describe('Last publish time to, inclusive (ISO 8601 date or date-time)'),
  hasEmail: z.boolean().nullish().describe('true: only creators with contact details; false or absent: no condition (as REST 0)'),
  languages: languageCodes.nullish().describe('ISO 639-1 language codes'),
  avgEngagementCountMin: metricBound.nullish().describe('Average likes + comments + reposts per post'),
  avgEngagementCountMax: metricBound.nullish().describe('Average likes + comments + reposts per post'),
  avgVideoEngagementRateMin: metricBound.nullish().describe('Percent'),
  avgVideoEngagementRateMax: metricBound.nullish().describe('Percent'),
  verified: z.boolean().nullish().describe('true: only verified creators; false or absent: no condition (as REST 0)'),
  retweetRatioMax: metricBound.nullish().describe('Maximum repost share, percent'),
};

export const creatorFilter = filterSchema(creatorFilterShape);
export type CreatorFilter = z.infer<typeof creatorFilter>;

export const creatorSort = z
  .enum(creatorSorts)
  .describe('Creator order, always descending; RELEVANCE by default with a query, else FOLLOWER_COUNT');
export type { CreatorSort };

// The REST body of POST /api/v1/search/twitter/user, before its wire codecs (see src/rest/codecs.ts).
export const creatorSearchBody = z
  .strictObject({ ...creatorFilterShape, ...pageShape, sortBy: creatorSort.nullish() })
  .superRefine(checkRanges)
  .superRefine(checkOffsetWindow);

// The GraphQL `creators` field's arguments: the same filter, plus Relay connection arguments.
export const creatorsArgs = z
  .object({ filter: creatorFilter.nullish(), sortBy: creatorSort.nullish(), ...connectionArgsShape })
  .superRefine(checkConnectionArgs);

/** A validated filter with category ids already expanded (see categories.ts). */
export interface CreatorSearch {
  platform: string;
  filter: CreatorFilter;
  categoryIds: number[] | null;
  sort: CreatorSort;
}

export function defaultCreatorSort(filter: CreatorFilter): CreatorSort {
  return filter.query ? 'RELEVANCE' : 'FOLLOWER_COUNT';
}
