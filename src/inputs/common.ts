import { z } from 'zod';
import { genders } from '../domain/values.js';

// Shared pieces of the input schemas. Every schema here is the single definition of an input:
// GraphQL args, REST bodies and CLI flags derive from them. Schemas only validate (no transforms),
// so a validated value is still plain JSON and can travel as GraphQL variables unchanged.

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;

/** An instant to the nanosecond: epoch milliseconds, then nanoseconds past them (0–999,999). */
type ExactInstant = readonly [ms: number, ns: number];

export interface InstantRange {
  /**
   * A start bound, inclusive: the first whole millisecond at or after the given instant (stored
   * instants are whole milliseconds), so `…:59.9991Z` starts at the next millisecond.
   */
  start: Date;
  // Exclusive: the end of the given instant, or the day after an end date (inclusive through its last ms).
  endExclusive: Date;
  /** The first and last instants the text names, to the nanosecond: a date is a whole day. */
  first: ExactInstant;
  last: ExactInstant;
}

const laterThan = (a: ExactInstant, b: ExactInstant) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// Years from 100: Date.UTC, which this check replaced, reads 0-99 as 1900-1999, so they never passed.
function validDate(year: number, month: number, day: number): boolean {
  if (year < 100 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]);
}

// toISOString()'s own form, 2026-01-31T08:00:00.000Z: what exports write, and what an import checks
// once per timestamp, so it is read without a regex, a match array or a Date.
const CANONICAL_SEPARATORS = new Map([[4, 45], [7, 45], [10, 84], [13, 58], [16, 58], [19, 46]]);

/** Whether `text` in toISOString()'s form is a valid instant; null when it is not in that form. */
function canonicalInstantValid(text: string): boolean | null {
  if (text.length !== 24 || text.charCodeAt(23) !== 90) return null;
  for (let i = 0; i < 23; i++) {
    const code = text.charCodeAt(i);
    const separator = CANONICAL_SEPARATORS.get(i);
    if (separator === undefined ? code < 48 || code > 57 : code !== separator) return null;
  }
  const digits = (from: number, to: number) => {
    let value = 0;
    for (let i = from; i < to; i++) value = value * 10 + text.charCodeAt(i) - 48;
    return value;
  };
  return validDate(digits(0, 4), digits(5, 7), digits(8, 10)) && digits(11, 13) <= 23 && digits(14, 16) <= 59 && digits(17, 19) <= 59;
}

/** Whether parseInstant reads `text`. */
export const isInstant = (text: string): boolean => canonicalInstantValid(text) ?? parseInstant(text) !== null;

/** A valid instant's text in toISOString()'s form (JSON columns store it so). */
export const canonicalInstant = (text: string): string => (canonicalInstantValid(text) ? text : new Date(text).toISOString());

/** Reads `2026-01-31` (a UTC day) or `2026-01-31T08:00:00Z` / `…+02:00`; null for anything else. */
export function parseInstant(text: string): InstantRange | null {
  const date = ISO_DATE.exec(text);
  if (date) {
    if (!validDate(Number(date[1]), Number(date[2]), Number(date[3]))) return null;
    const start = new Date(`${text}T00:00:00.000Z`);
    const endExclusive = new Date(start.getTime() + 86_400_000);
    return { start, endExclusive, first: [start.getTime(), 0], last: [endExclusive.getTime() - 1, 999_999] };
  }
  const dateTime = ISO_DATE_TIME.exec(text);
  if (!dateTime || !validDate(Number(dateTime[1]), Number(dateTime[2]), Number(dateTime[3]))) return null;
  if (Number(dateTime[4]) > 23 || Number(dateTime[5]) > 59 || Number(dateTime[6] ?? 0) > 59) return null;
  // Date keeps milliseconds and drops what follows them.
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return null;
  const ns = Number(((dateTime[7] ?? '').slice(3) + '000000').slice(0, 6));
  const exact: ExactInstant = [at.getTime(), ns];
  return { start: ns > 0 ? new Date(at.getTime() + 1) : at, endExclusive: new Date(at.getTime() + 1), first: exact, last: exact };
}

export const instant = z
  .string()
  .refine((text) => parseInstant(text) !== null, {
    message: 'must be an ISO 8601 date (2026-01-31) or date-time with Z or an offset (2026-01-31T08:00:00Z)',
  });

// A filter bound must fit the column it is compared with, or PostgreSQL refuses the statement
// (`1.5` for a bigint, `3e9` for an integer): each bound is checked against its column's type here,
// before any charge, and a misfit is a 400 naming the field.
export const INT32_MAX = 2_147_483_647;
/** numeric(20,2) holds up to 18 digits before the point. */
export const METRIC_LIMIT = 1e18;
/** A bound on a bigint count (followers): a whole number, exact up to 2^53 - 1. */
export const countBound = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A bound on an integer count (posts in a month). */
export const int32Bound = z.int().min(0).max(INT32_MAX);
/** A bound on a numeric(20,2) metric (averages, rates, ratios). */
export const metricBound = z.number().min(0).lt(METRIC_LIMIT);
export const countryCodes = z
  .array(z.string().regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code'))
  .max(250);
export const languageCodes = z
  .array(z.string().regex(/^[A-Za-z]{2}$/, 'must be an ISO 639-1 language code'))
  .max(200);
/** Free text: PostgreSQL text cannot hold NUL, so one is a 400 naming the field, not a 500 from SQL. */
export const freeText = (maxLength: number) =>
  z
    .string()
    .max(maxLength)
    .refine((text) => !text.includes('\u0000'), 'must not contain NUL characters');
export const searchQuery = freeText(200);

export const genderSchema = z.enum(genders).describe('Gender of a creator or channel');

/**
 * The audience filters both searches share (contract §4.1 and §4.2 list them alike): on the
 * creator for creator search, on the video's channel for video search.
 */
export const audienceFilterShape = {
  followerCountMin: countBound.nullish(),
  followerCountMax: countBound.nullish(),
  avgEngagementRateMin: metricBound.nullish().describe('Percent'),
  avgEngagementRateMax: metricBound.nullish().describe('Percent'),
  avgCommentCountMin: metricBound.nullish(),
  avgCommentCountMax: metricBound.nullish(),
  avgLikeCountMin: metricBound.nullish(),
  avgLikeCountMax: metricBound.nullish(),
  avgPlayCountMin: metricBound.nullish(),
  avgPlayCountMax: metricBound.nullish(),
  gender: genderSchema.nullish(),
  recentMonthPublishCountMin: int32Bound.nullish(),
  recentMonthPublishCountMax: int32Bound.nullish(),
};

/**
 * Cross-field rules shared by every filter: each `xMin`/`xMax` pair and the `createAtStart`/
 * `createAtEnd` range must not be inverted. Paired by name, so a new bound needs no new rule.
 */
export function checkRanges(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const [key, min] of Object.entries(value)) {
    if (!key.endsWith('Min') || typeof min !== 'number') continue;
    const maxKey = `${key.slice(0, -3)}Max`;
    const max = value[maxKey];
    if (typeof max === 'number' && min > max) {
      ctx.addIssue({ code: 'custom', path: [key], message: `must not be greater than ${maxKey}` });
    }
  }
  const start = typeof value.createAtStart === 'string' ? parseInstant(value.createAtStart) : null;
  const end = typeof value.createAtEnd === 'string' ? parseInstant(value.createAtEnd) : null;
  if (start && end && laterThan(start.first, end.last)) {
    ctx.addIssue({ code: 'custom', path: ['createAtStart'], message: 'must not be after createAtEnd' });
  }
}

export function filterSchema<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject(shape).superRefine(checkRanges);
}

// Offset paging (REST) stops at the 10,000th result; deeper traversal uses connection cursors.
export const MAX_OFFSET_WINDOW = 10_000;
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

export const pageShape = {
  page: z.int().min(1).nullish().describe('Page number, from 1'),
  pageSize: z.int().min(1).max(MAX_PAGE_SIZE).nullish().describe('Items per page, 1 to 100 (default 20)'),
};

export function checkOffsetWindow(value: { page?: number | null; pageSize?: number | null }, ctx: z.RefinementCtx): void {
  const page = value.page ?? 1;
  const pageSize = value.pageSize ?? DEFAULT_PAGE_SIZE;
  if (page * pageSize > MAX_OFFSET_WINDOW) {
    ctx.addIssue({
      code: 'custom',
      path: ['page'],
      message: `reaches past result ${MAX_OFFSET_WINDOW} (page × pageSize); use the GraphQL connection cursors for deeper traversal`,
    });
  }
}

export const cursor = z.string().max(512);

/** Relay connection arguments. */
export const cursorArgsShape = {
  first: z.int().min(0).max(MAX_PAGE_SIZE).nullish(),
  last: z.int().min(0).max(MAX_PAGE_SIZE).nullish(),
  after: cursor.nullish(),
  before: cursor.nullish(),
};

/** Relay connection arguments plus `offset`, which mirrors the REST page window and shares its limit. */
export const connectionArgsShape = {
  ...cursorArgsShape,
  offset: z.int().min(0).nullish(),
};

export function checkConnectionArgs(
  value: { first?: number | null; last?: number | null; offset?: number | null; after?: string | null; before?: string | null },
  ctx: z.RefinementCtx,
): void {
  if (value.first != null && value.last != null) {
    ctx.addIssue({ code: 'custom', path: ['last'], message: 'cannot be combined with first; use one of them' });
  }
  if (value.offset != null) {
    if (value.after != null || value.before != null || value.last != null) {
      ctx.addIssue({ code: 'custom', path: ['offset'], message: 'cannot be combined with after, before or last' });
    } else if (value.offset + (value.first ?? DEFAULT_PAGE_SIZE) > MAX_OFFSET_WINDOW) {
      ctx.addIssue({
        code: 'custom',
        path: ['offset'],
        message: `reaches past result ${MAX_OFFSET_WINDOW} (offset + first); use after/before cursors for deeper traversal`,
      });
    }
  }
}
