import type { PageArgs } from '../../domain/cursors.js';
import { creatorNumericBounds } from '../../domain/bounds.js';
import type { CreatorIndexRow, CreatorKey } from '../../domain/index-rows.js';
import { creatorOrders } from '../../domain/orders.js';
import type { CreatorFacet, FacetAnswer, FacetRequest } from '../../domain/facets.js';
import { genderFromCode, genderToCode } from '../../domain/values.js';
import type { CreatorSearch } from '../../inputs/creators.js';
import { creatorFacetSearch } from '../../inputs/facets.js';
import { andInto, andNotInto, BitsetPool, copyInto, orInto, popcount, withRoom } from '../primitives/bitset.js';
import { RangeIndex } from '../primitives/range-index.js';
import { filterKey, type Match, ResultCache } from '../primitives/result-cache.js';
import { RowTable } from '../primitives/row-table.js';
import { SnapshotRejected, type SnapshotReader, type Snapshotted, type SnapshotWriter } from '../primitives/snapshot-io.js';
import { SortOrder } from '../primitives/sort-order.js';
import { TextIndex } from '../primitives/text-index.js';
import { ValueIndex } from '../primitives/value-index.js';
import type { IndexPage } from '../types.js';
import { countRanges, countValues } from './facet-counts.js';
import { conditionsOf, inclusiveBounds, instantBounds, Matcher, type NumericColumn } from './matcher.js';
import { type BoundedMatch, BoundedCounts } from './own-key.js';
import { indexPageOf, keyRangeOf, pageSegments, positionOfCursor, type SearchProbe, type Segment } from './paging.js';
import { lowerCase } from '../../domain/text.js';

// Creator search in memory: every filter of src/store/creators.ts's WHERE, the three orders, the
// exact total; the page's rows are then read from PostgreSQL by key.

type CreatorColumn = (typeof creatorNumericBounds)[number][2];

const countColumns = new Set<CreatorColumn>(['follower_count', 'recent_month_publish_count']);

/**
 * Buckets of each range column: 8 bits a code. A bound falls inside a bucket whose rows are tested
 * one by one (or marked from the order), so four times the buckets of the default's 6 bits test a
 * quarter of the rows for a third more slices a pass: at 10M creators selective searches 1.12×,
 * GraphQL creators 1.35× (docs/performance.md).
 */
const RANGE_BUCKETS = 254;

/** The index row's value of each numeric filter column. */
const numericValue: Record<CreatorColumn, (row: CreatorIndexRow) => number> = {
  follower_count: (row) => row.followerCount,
  avg_engagement_rate: (row) => row.avgEngagementRate,
  avg_comment_count: (row) => row.avgCommentCount,
  avg_like_count: (row) => row.avgLikeCount,
  avg_view_count: (row) => row.avgViewCount,
  recent_month_publish_count: (row) => row.recentMonthPublishCount,
  avg_engagement_count: (row) => row.avgEngagementCount,
  avg_video_engagement_rate: (row) => row.avgVideoEngagementRate,
  retweet_ratio: (row) => row.retweetRatio,
};

/** A condition on one of the creators' value indexes: the facet of its column, and the values it asks for. */
interface ValueCondition {
  name: CreatorFacet;
  column: ValueIndex<string | number | boolean>;
  values: readonly (string | number | boolean)[];
}

/** Filter fields that select rows by a value's bitmap (value indexes). */
const VALUE_CONDITIONS = new Set(['locations', 'languages', 'gender', 'verified', 'hasEmail']);

export class CreatorIndex {
  /** Each slot's platform, a code into #platforms: part of its key, so a dead slot keeps it. */
  #platformCodes = new Uint8Array(1024);
  #platforms: string[] = [];
  readonly table: RowTable = new RowTable(
    (slot) => creatorKey(this.#platformOf(slot), this.table.ids.get(slot)),
    (slot, key) => {
      const platform = this.#platformOf(slot);
      return key.startsWith(platform) && key.charCodeAt(platform.length) === 0 && this.table.ids.equals(slot, key, platform.length + 1);
    },
  );
  readonly #platform = new ValueIndex<string>();
  readonly #country = new ValueIndex<string>();
  readonly #language = new ValueIndex<string>();
  readonly #gender = new ValueIndex<number>();
  readonly #verified = new ValueIndex<boolean>();
  readonly #hasEmail = new ValueIndex<boolean>();
  readonly #categories = new ValueIndex<number>(true);
  readonly #numeric = Object.fromEntries(
    Object.keys(numericValue).map((column) => [column, { range: new RangeIndex(true, RANGE_BUCKETS), unit: countColumns.has(column as CreatorColumn) ? 'count' : 'cents' }]),
  ) as Record<CreatorColumn, NumericColumn>;
  readonly #lastPublishAt = new RangeIndex(false, RANGE_BUCKETS);
  readonly #username = new TextIndex();
  readonly #fullName = new TextIndex();
  readonly #followers = new SortOrder(this.table, (slot) => this.#numeric.follower_count.range.values.get(slot));
  readonly #engagement = new SortOrder(this.table, (slot) => this.#numeric.avg_engagement_rate.range.values.get(slot));
  readonly #pool = new BitsetPool();
  readonly #cache = new ResultCache(this.#pool);
  readonly #boundedCounts = new BoundedCounts();
  #loaded = false;

  constructor() {
    this.#numeric.follower_count.range.useOrder(this.#followers);
    this.#numeric.avg_engagement_rate.range.useOrder(this.#engagement);
  }

  /** Adds or replaces a creator. */
  upsert(row: CreatorIndexRow): void {
    const slot = this.table.slotFor(creatorKey(row.platform, row.userId), row.userId, (fresh) => this.#setPlatform(fresh, row.platform));
    this.#changing(slot);
    this.table.markAlive(slot, true);
    this.#platform.set(slot, row.platform);
    this.#country.set(slot, row.country);
    this.#language.set(slot, row.language);
    this.#gender.set(slot, row.gender);
    this.#verified.set(slot, row.isVerified);
    this.#hasEmail.set(slot, row.hasEmail);
    this.#categories.set(slot, row.categoryIds);
    for (const [column, value] of Object.entries(numericValue)) this.#numeric[column as CreatorColumn].range.set(slot, value(row));
    this.#lastPublishAt.set(slot, row.lastPublishAt);
    this.#username.set(slot, row.username);
    this.#fullName.set(slot, row.fullName);
  }

  /** Forgets a creator (deleted from the database). */
  remove(key: CreatorKey): void {
    const slot = this.table.slotOf(creatorKey(key.platform, key.userId));
    if (slot === -1 || !this.table.alive.has(slot)) return;
    this.#changing(slot);
    this.table.markAlive(slot, false);
    // Out of the platform bitmap, a dead slot matches no filter.
    this.#platform.set(slot, null);
  }

  #platformOf(slot: number): string {
    return this.#platforms[this.#platformCodes[slot]];
  }

  #setPlatform(slot: number, platform: string): void {
    let code = this.#platforms.indexOf(platform);
    if (code === -1) {
      if (this.#platforms.length > 0xff) throw new Error('more than 256 platforms');
      code = this.#platforms.push(platform) - 1;
    }
    this.#platformCodes = withRoom(this.#platformCodes, slot + 1);
    this.#platformCodes[slot] = code;
  }

  /** After the first load: balance the range buckets and sort the orders once. */
  finishLoad(): void {
    const size = this.table.size;
    this.table.trim();
    this.#platformCodes = this.#platformCodes.slice(0, Math.max(size, 1));
    for (const values of this.#valueIndexes()) values.trim(size);
    for (const { range } of Object.values(this.#numeric)) {
      range.trim(size);
      range.rebalance(size);
    }
    this.#lastPublishAt.trim(size);
    this.#lastPublishAt.rebalance(size);
    this.#username.trim();
    this.#fullName.trim();
    this.#followers.rebuild();
    this.#engagement.rebuild();
    this.#loaded = true;
    this.table.version++;
  }

  get loaded(): boolean {
    return this.#loaded;
  }

  /** How many filters' matches are kept (tests watch that one filter's spellings share one). */
  get cachedMatches(): number {
    return this.#cache.size;
  }

  /** Every structure, in the order `load` reads them (src/search/runtime/snapshots.ts). */
  save(out: SnapshotWriter): void {
    out.value({ loaded: this.#loaded, platforms: this.#platforms });
    out.array(this.#platformCodes, this.table.size);
    for (const part of this.#parts()) part.save(out);
  }

  /** Into a new, empty index. */
  load(input: SnapshotReader): void {
    const { loaded, platforms } = input.value<{ loaded: boolean; platforms: string[] }>();
    if (!Array.isArray(platforms) || platforms.some((platform) => typeof platform !== 'string')) throw new SnapshotRejected('the creators have no platforms');
    this.#loaded = loaded === true;
    this.#platforms = platforms;
    this.#platformCodes = input.array(Uint8Array);
    for (const part of this.#parts()) part.load(input);
    if (this.#platformCodes.length !== this.table.size || this.#platformCodes.some((code) => code >= platforms.length)) {
      throw new SnapshotRejected('the creators’ platforms do not add up');
    }
  }

  /** Every structure of the index, the row table first (the orders' ranks are sized by it). */
  #parts(): Snapshotted[] {
    const ranges = Object.values(this.#numeric).map(({ range }) => range);
    return [this.table, ...this.#valueIndexes(), ...ranges, this.#lastPublishAt, this.#username, this.#fullName, this.#followers, this.#engagement];
  }

  #valueIndexes(): ValueIndex<string | number | boolean>[] {
    return [this.#platform, this.#country, this.#language, this.#gender, this.#verified, this.#hasEmail, this.#categories] as ValueIndex<string | number | boolean>[];
  }

  /** The page of creator ids a search asks for, with its exact total (src/store/paging.ts semantics). */
  search(search: CreatorSearch, page: PageArgs, probe?: SearchProbe): IndexPage {
    const bounded = this.#boundedByOwnKey(search, probe);
    const { bits, count } = bounded ?? this.#match(search);
    // Every row within the bound matches (the bound alone): only a walk from the bound reads no other.
    if (bounded?.everyRowWithin) probe = { ...probe, smallSegmentRows: 0, strategy: 'walk' };
    const sort = creatorOrders[search.sort];
    const after = positionOfCursor(sort, page.after, 'after');
    const before = positionOfCursor(sort, page.before, 'before');
    const segments = this.#segments(search, bits, count, bounded?.held);
    const result = pageSegments(segments, { first: page.first, last: page.last, offset: page.offset, after, before }, probe);
    // Tier bitsets are this call's own; the match itself stays cached.
    this.#pool.give(...segments.filter((segment) => segment.bits !== bits).map((segment) => segment.bits));
    return indexPageOf(result, count);
  }

  /** Each facet counted on the match of its search (without its own conditions when asked), no row read. */
  facets(search: CreatorSearch, requests: readonly FacetRequest<CreatorFacet>[]): FacetAnswer[] {
    return requests.map((request) => {
      const counted = creatorFacetSearch(search, request);
      const { bits, count } = this.#match(counted);
      // The values the filter itself asks of the facet's column: the matches hold no other.
      const asked = this.#valueConditions(counted).find((condition) => condition.name === request.facet)?.values;
      switch (request.facet) {
        case 'country':
          return countValues(bits, count, this.#country, String, asked as string[] | undefined);
        case 'language':
          return countValues(bits, count, this.#language, String, asked as string[] | undefined);
        case 'gender':
          return countValues(bits, count, this.#gender, (code) => genderFromCode(code).toLowerCase(), asked as number[] | undefined);
        case 'category':
          return countValues(bits, count, this.#categories, String);
        case 'verified':
          return countValues(bits, count, this.#verified, String, asked as boolean[] | undefined);
        case 'hasEmail':
          return countValues(bits, count, this.#hasEmail, String, asked as boolean[] | undefined);
        // Both columns are NOT NULL (migrations): every match has a value.
        case 'followerCount':
          return countRanges(bits, count, this.#numeric.follower_count.range, 'count', request.edges ?? [], false);
        case 'avgEngagementRate':
          return countRanges(bits, count, this.#numeric.avg_engagement_rate.range, 'cents', request.edges ?? [], false);
      }
    });
  }

  /**
   * A filter that bounds the order's own key (a follower maximum under the follower order): the
   * bits of its other conditions, the count of those within the bound, and how many rows the bits
   * hold (`held`); the page is walked from the bound (src/search/tables/own-key.ts). With no other
   * condition, the bits are the platform's rows and the count two binary searches in the order.
   * Null when the filter does not bound the key, or when its whole match is cached anyway.
   */
  #boundedByOwnKey(search: CreatorSearch, probe?: SearchProbe): BoundedMatch | null {
    const own = search.sort === 'FOLLOWER_COUNT' ? creatorNumericBounds[0] : search.sort === 'ENGAGEMENT_RATE' ? creatorNumericBounds[1] : null;
    if (own === null) return null;
    const [minKey, maxKey, column] = own;
    const { range, unit } = this.#numeric[column];
    const bounds = inclusiveBounds(unit, minKey ? search.filter[minKey] : null, search.filter[maxKey]);
    if (bounds.min === undefined && bounds.max === undefined) return null;
    const order = search.sort === 'FOLLOWER_COUNT' ? this.#followers : this.#engagement;
    const others = Object.fromEntries(conditionsOf(search.filter).filter(([name]) => name !== minKey && name !== maxKey));
    // The order holds every platform's rows: only with one platform are they all the search's.
    if (Object.keys(others).length === 0 && search.categoryIds == null && this.#platforms.length === 1 && this.#platforms[0] === search.platform) {
      const bits = this.#platform.bitmap(search.platform, this.table.words);
      if (bits !== null) {
        const count = order.countKeyRange(bounds.min ?? -Infinity, bounds.max ?? Infinity, bounds.maxExclusive === true);
        return { bits, held: this.table.aliveCount, count, everyRowWithin: true };
      }
    }
    const key = this.#matchKey(search);
    if (this.#cache.has(key, this.table.version, this.table.words)) return null;
    // Only where the other conditions' bits are cached, or are the platform's or one value's (a
    // country): computed afresh for a mix of conditions, they cost the whole filter's bitset less
    // one pass, and the count about that pass again (selective creators ran 20 % slower, 2026-11-26).
    const rest: CreatorSearch = { ...search, filter: others };
    const conditions = Object.keys(others).length + (search.categoryIds == null ? 0 : 1);
    const platformOrOneValue = conditions <= 1 && Object.keys(others).every((name) => VALUE_CONDITIONS.has(name));
    const restKey = this.#matchKey(rest);
    if (!platformOrOneValue && !this.#cache.has(restKey, this.table.version, this.table.words)) return null;
    const match = this.#match(rest);
    const count = this.#boundedCounts.count(key, restKey, this.table.version, order, range, match, bounds, this.table.aliveCount, probe?.boundCount);
    return { bits: match.bits, held: match.count, count, everyRowWithin: false };
  }

  /** The search's conditions on the value indexes, named as the facets of their columns, values spelled as the indexes hold them. */
  #valueConditions(search: CreatorSearch): ValueCondition[] {
    const { filter } = search;
    const conditions: ValueCondition[] = [];
    const add = <V extends string | number | boolean>(name: CreatorFacet, column: ValueIndex<V>, values: readonly V[]) =>
      conditions.push({ name, column: column as ValueIndex<string | number | boolean>, values });
    if (filter.locations?.length) add('country', this.#country, filter.locations.map((code) => code.toUpperCase()));
    if (filter.languages?.length) add('language', this.#language, filter.languages.map((code) => code.toLowerCase()));
    if (filter.gender) add('gender', this.#gender, [genderToCode(filter.gender)]);
    if (filter.hasEmail) add('hasEmail', this.#hasEmail, [true]);
    if (filter.verified) add('verified', this.#verified, [true]);
    if (search.categoryIds) add('category', this.#categories, search.categoryIds);
    return conditions;
  }

  #matchKey(search: CreatorSearch): string {
    return filterKey(search.platform, search.filter, search.categoryIds);
  }

  /** The rows matching the filter (cached per filter until the next change). */
  #match(search: CreatorSearch): Match {
    const key = this.#matchKey(search);
    const cached = this.#cache.get(key, this.table.version, this.table.words);
    if (cached) return cached;
    const { filter } = search;
    const match = new Matcher(this.table.words, this.#pool, this.#platform.bitmap(search.platform, this.table.words));
    for (const { column, values } of this.#valueConditions(search)) match.values(column, values);
    // Bitmaps and text first: the ranges after them often have few rows left to test.
    if (filter.query) match.text([this.#username, this.#fullName], lowerCase(filter.query));
    for (const [minKey, maxKey, column] of creatorNumericBounds) {
      const { range, unit } = this.#numeric[column];
      match.range(range, inclusiveBounds(unit, minKey ? filter[minKey] : null, filter[maxKey]));
    }
    match.range(this.#lastPublishAt, instantBounds(filter));
    return this.#cache.keep(key, this.table.version, match.finish());
  }

  /**
   * The order as segments: one for followers or engagement; for relevance one per tier (exact
   * username 3, username prefix 2, full-name prefix 1, any other match 0), each by followers.
   */
  #segments(search: CreatorSearch, bits: Uint32Array, count: number, held?: number): Segment[] {
    const { filter } = search;
    const followers = keyRangeOf(inclusiveBounds('count', filter.followerCountMin, filter.followerCountMax));
    if (search.sort === 'FOLLOWER_COUNT') return [{ rank: 0, bits, count, held, order: this.#followers, keyRange: followers }];
    if (search.sort === 'ENGAGEMENT_RATE') {
      const engagement = keyRangeOf(inclusiveBounds('cents', filter.avgEngagementRateMin, filter.avgEngagementRateMax));
      return [{ rank: 0, bits, count, held, order: this.#engagement, keyRange: engagement }];
    }
    const query = lowerCase(search.filter.query ?? '');
    const words = this.table.words;
    // Each tier copied at once: a TextIndex result is only valid until its next search.
    const tiers = (
      [
        [this.#username, 'equals'],
        [this.#username, 'prefix'],
        [this.#fullName, 'prefix'],
      ] as const
    ).map(([column, how]) => {
      const tier = this.#pool.takeUncleared(words);
      copyInto(tier, column.rowsMatching(query, words, how), words);
      return tier;
    });
    const higher = this.#pool.take(words);
    const rest = this.#pool.takeUncleared(words);
    copyInto(rest, bits, words);
    const segments: Segment[] = tiers.map((tier, i) => {
      andInto(tier, bits, words);
      andNotInto(tier, higher, words);
      orInto(higher, tier, words);
      return { rank: 3 - i, bits: tier, count: popcount(tier, words), order: this.#followers, keyRange: followers };
    });
    andNotInto(rest, higher, words);
    this.#pool.give(higher);
    segments.push({ rank: 0, bits: rest, count: popcount(rest, words), order: this.#followers, keyRange: followers });
    return segments;
  }

  /** Before a row changes (its orders find it by its key as they sorted it), or is added or removed. */
  #changing(slot: number): void {
    this.table.version++;
    if (!this.#loaded) return;
    this.#followers.touch(slot);
    this.#engagement.touch(slot);
  }
}

/** A creator's key in its row table: ids are unique per platform only. */
const creatorKey = (platform: string, userId: string) => `${platform}\u0000${userId}`;
