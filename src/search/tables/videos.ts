import { channelNumericBounds } from '../../domain/bounds.js';
import { type PageArgs, pageDirection } from '../../domain/cursors.js';
import type { ChannelIndexRow, VideoIndexRow } from '../../domain/index-rows.js';
import { videoOrders } from '../../domain/orders.js';
import type { FacetAnswer, FacetRequest, VideoFacet } from '../../domain/facets.js';
import { genderToCode } from '../../domain/values.js';
import { videoFacetSearch } from '../../inputs/facets.js';
import { needsChannel, type VideoFilter, type VideoSearch } from '../../inputs/videos.js';
import { andInto, andNotInto, BitsetPool, copyInto, orInto, popcount, type WordWindow } from '../primitives/bitset.js';
import { CombinationCounts } from '../primitives/combination-counts.js';
import { RangeIndex } from '../primitives/range-index.js';
import { filterKey, type Match, ResultCache } from '../primitives/result-cache.js';
import { Int32Column, NumberColumn, RowTable } from '../primitives/row-table.js';
import type { SnapshotReader, Snapshotted, SnapshotWriter } from '../primitives/snapshot-io.js';
import { SortOrder } from '../primitives/sort-order.js';
import { TextIndex } from '../primitives/text-index.js';
import { ValueIndex } from '../primitives/value-index.js';
import type { IndexPage } from '../types.js';
import { countMonths, countValues } from './facet-counts.js';
import { conditionsOf, inclusiveBounds, instantBounds, Matcher, type NumericColumn } from './matcher.js';
import { BoundedCounts } from './own-key.js';
import { indexPageOf, isSmallSegment, keyRangeOf, type PageRequest, pageSegments, positionOfCursor, type SearchProbe, type Segment, type SlotPage } from './paging.js';
import { lowerCase } from '../../domain/text.js';

// Video search in memory, with its channel filters. The two channel conditions nearly every
// channel-filtered search has (countries, follower bounds) are copied onto each video's slot, so
// they are bitmap operations like the video's own; a channel change rewrites its few videos. The
// rarer ones (gender, the other metrics) find the matching channels first (a table of their own),
// then keep the videos of those channels.

type ChannelColumn = (typeof channelNumericBounds)[number][2];

const channelValue: Record<ChannelColumn, (row: ChannelIndexRow) => number> = {
  follower_count: (row) => row.followerCount,
  avg_engagement_rate: (row) => row.avgEngagementRate,
  avg_comment_count: (row) => row.avgCommentCount,
  avg_like_count: (row) => row.avgLikeCount,
  avg_play_count: (row) => row.avgPlayCount,
  recent_month_publish_count: (row) => row.recentMonthPublishCount,
};
const channelCountColumns = new Set<ChannelColumn>(['follower_count', 'recent_month_publish_count']);

/** Whether a filter has channel conditions beyond the three copied onto the videos. */
const needsOtherChannelConditions = (filter: VideoFilter): boolean =>
  needsChannel({ ...filter, locations: null, gender: null, followerCountMin: null, followerCountMax: null });

/** Below this share of the videos, channel conditions are checked video by video. */
const FEW_VIDEOS = 1 / 16;
/** The bitset of a segment given as a list of slots or as a test (never read). */
const NO_WORDS = new Uint32Array(0);

/** The conditions a newest-first page without its total tests row by row (see #rowTest). */
const ROW_TESTED = new Set(['createAtStart', 'createAtEnd', 'categorys', 'videoType', 'locations', 'followerCountMin', 'followerCountMax', 'query']);
/** A condition on one of the videos' single-valued columns: the facet of its column, and the values it asks for. */
interface ValueCondition {
  name: VideoFacet;
  column: ValueIndex<string | number>;
  values: readonly (string | number)[];
}

/** The rows a window reads: its offset, its page, and one telling whether more exist. */
const windowRows = (window: PageRequest) => (window.offset ?? 0) + pageDirection(window).limit + 1;

/** Thrown by a row test past its budget: the page is then found through the filter's bitset. */
const ABANDONED = Symbol('row test over budget');

/** The title match of relevance tiers 1, 2 and 3 (TextIndex.rowsMatching's `how`), at tier - 1. */
const TITLE_TIERS = ['contains', 'prefix', 'equals'] as const;

/**
 * The matching rows a relevance page walks in each tier (by tier, 0–3) to fill `window`, from the
 * tiers' counts: a window without cursors skips whole tiers by its offset, highest first; one with
 * a cursor, or backward, may read its rows from any tier.
 */
function tierRowsRead(counts: readonly number[], window: PageRequest): number[] {
  const rows = windowRows(window);
  if (window.after || window.before || pageDirection(window).backward) return counts.map((count) => Math.min(count, rows));
  const needs = [0, 0, 0, 0];
  let skip = window.offset ?? 0;
  let take = rows - skip;
  for (let tier = 3; tier >= 0 && take > 0; tier--) {
    if (skip >= counts[tier]) {
      skip -= counts[tier];
      continue;
    }
    const taken = Math.min(take, counts[tier] - skip);
    needs[tier] = skip + taken;
    take -= taken;
    skip = 0;
  }
  return needs;
}

class ChannelTable {
  readonly table = new RowTable();
  readonly country = new ValueIndex<string>();
  readonly gender = new ValueIndex<number>();
  readonly numeric = Object.fromEntries(
    Object.keys(channelValue).map((column) => [column, { range: new RangeIndex(true), unit: channelCountColumns.has(column as ChannelColumn) ? 'count' : 'cents' }]),
  ) as Record<ChannelColumn, NumericColumn>;
  /** The first video of each channel, linked through VideoIndex's next/prev. */
  readonly firstVideo = new Int32Column();

  upsert(row: ChannelIndexRow): number {
    const slot = this.table.slotFor(row.channelId, row.channelId, () => {});
    this.firstVideo.ensure(slot + 1);
    this.table.markAlive(slot, true);
    this.country.set(slot, row.country);
    this.gender.set(slot, row.gender);
    for (const [column, value] of Object.entries(channelValue)) this.numeric[column as ChannelColumn].range.set(slot, value(row));
    this.table.version++;
    return slot;
  }

  remove(channelId: string): void {
    const slot = this.table.slotOf(channelId);
    if (slot === -1) return;
    this.table.markAlive(slot, false);
    this.table.version++;
  }

  rebalance(): void {
    for (const { range } of Object.values(this.numeric)) range.rebalance(this.table.size);
  }

  /** Drops the room past the slots in use (after a bulk load). */
  trim(): void {
    const size = this.table.size;
    this.table.trim();
    this.country.trim(size);
    this.gender.trim(size);
    for (const { range } of Object.values(this.numeric)) range.trim(size);
    this.firstVideo.trim(size);
  }

  save(out: SnapshotWriter): void {
    for (const part of this.#parts()) part.save(out);
  }

  load(input: SnapshotReader): void {
    for (const part of this.#parts()) part.load(input);
  }

  #parts(): Snapshotted[] {
    return [this.table, this.country, this.gender, ...Object.values(this.numeric).map(({ range }) => range), this.firstVideo];
  }

  /** The follower count of a live channel, NaN (matches no bound) for none or a deleted one. */
  followersOf(slot: number): number {
    return slot !== -1 && this.table.alive.has(slot) ? this.numeric.follower_count.range.values.get(slot) : NaN;
  }

  countryAt(slot: number): string | null {
    // From the country index's code per slot: a JS array of 2M country strings was 16 MB of heap.
    return slot !== -1 && this.table.alive.has(slot) ? this.country.valueOf(slot) : null;
  }

  genderAt(slot: number): number | null {
    return slot !== -1 && this.table.alive.has(slot) ? this.gender.valueOf(slot) : null;
  }

  /** The channels matching the channel conditions of a video filter. */
  match(filter: VideoFilter, pool: BitsetPool): Uint32Array {
    const match = new Matcher(this.table.words, pool, this.table.alive.words);
    if (filter.locations?.length) match.values(this.country, filter.locations.map((code) => code.toUpperCase()));
    if (filter.gender) match.values(this.gender, [genderToCode(filter.gender)]);
    for (const [minKey, maxKey, column] of channelNumericBounds) {
      const { range, unit } = this.numeric[column];
      match.range(range, inclusiveBounds(unit, filter[minKey], filter[maxKey]));
    }
    return match.finish().bits;
  }
}

export class VideoIndex {
  readonly table = new RowTable();
  readonly #channels = new ChannelTable();
  readonly #channelOf = new Int32Column();
  readonly #nextInChannel = new Int32Column();
  readonly #prevInChannel = new Int32Column();
  readonly #category = new ValueIndex<number>();
  readonly #videoType = new ValueIndex<number>();
  // Every video search has a date window over millions of rows: 127 buckets (7 bits a code with
  // NULL's 0) leave a quarter of the rows of 32 to test at its edges, each a cache miss on the dates.
  readonly #createAt = new RangeIndex(false, 127);
  readonly #plays = new NumberColumn();
  /**
   * The channel's country, gender and follower count, per video (kept in step by #copyChannel).
   * Gender came last: checked video by video through the channel's bits, a filter with it spent
   * most of its time reading each remaining video's channel at random (a cache miss each).
   */
  readonly #channelCountry = new ValueIndex<string>();
  readonly #channelGender = new ValueIndex<number>();
  readonly #channelFollowers = new RangeIndex(true);
  readonly #title = new TextIndex();
  readonly #description = new TextIndex();
  readonly #newest = new SortOrder(this.table, (slot) => this.#createAt.values.get(slot));
  readonly #mostPlayed = new SortOrder(this.table, (slot) => this.#plays.get(slot));
  readonly #pool = new BitsetPool();
  readonly #cache = new ResultCache(this.#pool);
  readonly #boundedCounts = new BoundedCounts();
  /** Live videos per (title code, description code, type code): see #countTextOnly. Not in the snapshot: counted at load. */
  readonly #combinations = new CombinationCounts();
  #loaded = false;

  constructor() {
    this.#createAt.useOrder(this.#newest);
  }

  upsertChannel(row: ChannelIndexRow): void {
    this.#recopy(this.#channels.upsert(row));
    // Channel conditions decide which videos match: cached video results are stale too.
    this.table.version++;
  }

  removeChannel(channelId: string): void {
    this.#channels.remove(channelId);
    this.#recopy(this.#channels.table.slotOf(channelId));
    this.table.version++;
  }

  /** Copies a channel's country, gender and followers onto each of its videos again. */
  #recopy(channel: number): void {
    if (channel === -1 || channel >= this.#channels.firstVideo.data.length) return;
    const next = this.#nextInChannel.data;
    for (let video = this.#channels.firstVideo.data[channel]; video !== -1; video = next[video]) this.#copyChannel(video);
  }

  #copyChannel(slot: number): void {
    const channel = this.#channelOf.data[slot];
    this.#channelCountry.set(slot, this.#channels.countryAt(channel));
    this.#channelGender.set(slot, this.#channels.genderAt(channel));
    this.#channelFollowers.set(slot, this.#channels.followersOf(channel));
  }

  hasChannel(channelId: string): boolean {
    return this.#channels.table.slotOf(channelId) !== -1;
  }

  /**
   * Gives these videos slots, in this order, before their rows are loaded: slots in date order put
   * a date window's videos in a narrow run of words (see Matcher), and new videos, the newest,
   * keep it so by taking the next slots.
   */
  reserve(videoIds: readonly string[]): void {
    for (const id of videoIds) this.table.slotFor(id, id, () => {});
  }

  /** Adds or replaces a video; its channel must have been upserted. */
  upsert(row: VideoIndexRow): void {
    const slot = this.table.slotFor(row.videoId, row.videoId, () => {});
    this.#changing(slot);
    if (this.#loaded && this.table.alive.has(slot)) this.#combine(slot, -1);
    for (const column of [this.#channelOf, this.#nextInChannel, this.#prevInChannel]) column.ensure(slot + 1);
    this.table.markAlive(slot, true);
    this.#setChannel(slot, this.#channels.table.slotOf(row.channelId));
    this.#copyChannel(slot);
    this.#category.set(slot, row.categoryId);
    this.#videoType.set(slot, row.videoType);
    this.#createAt.set(slot, row.createAt);
    this.#plays.set(slot, row.playCount);
    this.#title.set(slot, row.title);
    this.#description.set(slot, row.description);
    if (this.#loaded) this.#combine(slot, 1);
  }

  remove(videoId: string): void {
    const slot = this.table.slotOf(videoId);
    if (slot === -1 || !this.table.alive.has(slot)) return;
    this.#changing(slot);
    if (this.#loaded) this.#combine(slot, -1);
    this.table.markAlive(slot, false);
    this.#setChannel(slot, -1);
    this.#copyChannel(slot);
  }

  finishLoad(): void {
    const size = this.table.size;
    this.table.trim();
    this.#channels.trim();
    this.#channels.rebalance();
    for (const column of [this.#channelOf, this.#nextInChannel, this.#prevInChannel]) column.trim(size);
    for (const values of [this.#category, this.#videoType, this.#channelCountry, this.#channelGender] as ValueIndex<string | number>[]) values.trim(size);
    this.#plays.trim(size);
    for (const range of [this.#createAt, this.#channelFollowers]) {
      range.trim(size);
      range.rebalance(size);
    }
    this.#title.trim();
    this.#description.trim();
    this.#newest.rebuild();
    this.#mostPlayed.rebuild();
    this.#loaded = true;
    this.#countCombinations();
    this.table.version++;
  }

  /** Counts every live video's combination of title, description and type afresh. */
  #countCombinations(): void {
    this.#combinations.clear();
    const alive = this.table.alive;
    const types = this.#videoType.slotCodes.codeOf;
    for (let slot = 0; slot < this.table.size && this.#combinations.kept; slot++) if (alive.has(slot)) this.#combine(slot, 1, types);
  }

  /**
   * Adds `rows` (1 or -1) to the slot's combination of title, description and type (`types`: the
   * type's code per slot, as of now), its plays the combination's top when added.
   */
  #combine(slot: number, rows: number, types = this.#videoType.slotCodes.codeOf): void {
    this.#combinations.add(this.#title.entryOf(slot) + 1, this.#description.entryOf(slot) + 1, types[slot] ?? 0, rows, this.#plays.get(slot));
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
    out.value(this.#loaded);
    for (const part of this.#parts()) part.save(out);
  }

  /** Into a new, empty index. */
  load(input: SnapshotReader): void {
    this.#loaded = input.value<boolean>() === true;
    for (const part of this.#parts()) part.load(input);
    if (this.#loaded) this.#countCombinations();
  }

  /** Every structure of the index, the row table first (the orders' ranks are sized by it). */
  #parts(): Snapshotted[] {
    return [
      this.table,
      this.#channels,
      this.#channelOf,
      this.#nextInChannel,
      this.#prevInChannel,
      this.#category,
      this.#videoType,
      this.#createAt,
      this.#plays,
      this.#channelCountry,
      this.#channelGender,
      this.#channelFollowers,
      this.#title,
      this.#description,
      this.#newest,
      this.#mostPlayed,
    ];
  }

  get channelCount(): number {
    return this.#channels.table.aliveCount;
  }

  /**
   * `needsTotal` false (nobody asked for the total or facets): a newest-first page whose every
   * condition can be tested on a row is found by walking the order from its date bound testing
   * each row, with no bitset of the filter over every row (the nested page's root, a GraphQL page
   * without totalCount); `total` is then null. Past a budget of rows tested (a rare match) it
   * falls back to the bitset.
   */
  search(search: VideoSearch, page: PageArgs, probe?: SearchProbe, needsTotal = true): IndexPage {
    const order = videoOrders[search.sort];
    const window: PageRequest = {
      first: page.first,
      last: page.last,
      offset: page.offset,
      after: positionOfCursor(order, page.after, 'after'),
      before: positionOfCursor(order, page.before, 'before'),
    };
    if (!needsTotal) {
      const tested = this.#pageByTest(search, window, probe);
      if (tested) return indexPageOf(tested, null);
    }
    const textTotal = this.#countTextOnly(search);
    if (textTotal !== null) return this.#pageCounted(search, window, textTotal, probe);
    const tiered = this.#pageTextTiers(search, window, probe);
    if (tiered) return tiered;
    // A channel's matches (Channel.videos) come as a list: a few, newest first, are sorted as they
    // are; only many, or relevance tiers, are worth a bitset as wide as the table.
    const inChannel = search.channelId == null ? null : this.#channelMatches(search.filter, search.channelId);
    const listed = inChannel !== null && search.sort === 'NEWEST' && isSmallSegment(inChannel.length, probe);
    const bounded = inChannel === null ? this.#boundOnOrderOnly(search) : null;
    const withinDates = bounded === null && inChannel === null ? this.#countWithinDates(search, probe) : null;
    if (withinDates !== null) return this.#pageCounted(search, window, withinDates, probe);
    const { bits, count, window: matchWindow }: Match = bounded ?? (inChannel === null ? this.#match(search.filter) : listed ? { bits: NO_WORDS, count: inChannel.length } : this.#bitsOf(inChannel));
    // Every row of such bits within the bound matches: only a walk from the bound reads no other.
    if (bounded) probe = { ...probe, smallSegmentRows: 0, strategy: 'walk' };
    const segments = this.#segments(search, bits, count, listed ? inChannel : undefined, matchWindow);
    const result = pageSegments(segments, window, probe);
    this.#pool.give(...segments.filter((segment) => segment.bits !== bits).map((segment) => segment.bits));
    // A channel's matches are the search's own; a filter's belong to the result cache.
    if (inChannel !== null && !listed) this.#pool.give(bits);
    return indexPageOf(result, count);
  }

  /** The page walked along the newest order testing each row (see search), or null: no such test, or over its budget. */
  #pageByTest(search: VideoSearch, window: PageRequest, probe?: SearchProbe): SlotPage | null {
    if (!this.#rowTestable(search)) return null;
    const walk = (inText: ((slot: number) => boolean) | null) => {
      const accept = this.#rowTest(search, this.#testBudget(window, probe), inText);
      const segment: Segment = { rank: 0, bits: NO_WORDS, count: Infinity, order: this.#newest, keyRange: keyRangeOf(instantBounds(search.filter)), accept };
      try {
        return pageSegments([segment], window, probe);
      } catch (error) {
        if (error === ABANDONED) return null;
        throw error;
      }
    };
    const query = search.filter.query ? lowerCase(search.filter.query) : null;
    if (query === null) return walk(null);
    // A text condition: the slot's title or description among the query's matching texts.
    return this.#title.whileMatching(query, (inTitle) => this.#description.whileMatching(query, (inDescription) => walk((slot) => inTitle(slot) || inDescription(slot))));
  }

  /** Rows a walk tests before giving up: a few thousand, more for a deep window (about 1 row in 64 matching). */
  #testBudget(window: PageRequest, probe?: SearchProbe): number {
    return probe?.rowTestBudget ?? 4_096 + 64 * windowRows(window);
  }

  /** Whether #rowTest can test the search's filter: newest first over all channels, each condition one it tests. */
  #rowTestable(search: VideoSearch): boolean {
    if (search.sort !== 'NEWEST' || search.channelId != null) return false;
    for (const [name] of conditionsOf(search.filter)) if (!ROW_TESTED.has(name)) return false;
    return true;
  }

  /**
   * The filter as a test of one row, for a search #rowTestable takes, with `inText` the test of
   * its text query (null: none). The same conditions as #match, one for one; throws ABANDONED
   * past `budget` rows.
   */
  #rowTest(search: VideoSearch, budget: number, inText: ((slot: number) => boolean) | null): (slot: number) => boolean {
    const { filter } = search;
    const alive = this.table.alive;
    const dates = instantBounds(filter);
    const createAt = this.#createAt.values;
    const holds = this.#valueConditions(filter).map(({ column, values }) => column.holdsAny(values));
    const followers = inclusiveBounds('count', filter.followerCountMin, filter.followerCountMax);
    const followersBounded = followers.min !== undefined || followers.max !== undefined;
    const channelFollowers = this.#channelFollowers.values;
    let tested = 0;
    return (slot) => {
      if (++tested > budget) throw ABANDONED;
      if (!alive.has(slot)) return false;
      if (dates.min !== undefined || dates.max !== undefined) {
        const at = createAt.get(slot);
        if (dates.min !== undefined && !(at >= dates.min)) return false;
        if (dates.max !== undefined && !(dates.maxExclusive ? at < dates.max : at <= dates.max)) return false;
      }
      for (const held of holds) if (!held(slot)) return false;
      if (inText !== null && !inText(slot)) return false;
      if (followersBounded) {
        // NaN (no channel) is within no bound, as in the range index.
        const value = channelFollowers.get(slot);
        if (!(value >= (followers.min ?? -Infinity) && value <= (followers.max ?? Infinity))) return false;
      }
      return true;
    };
  }

  /** Each facet counted on the match of its search (without its own conditions when asked), no row read. */
  facets(search: VideoSearch, requests: readonly FacetRequest<VideoFacet>[]): FacetAnswer[] {
    return requests.map((request) => {
      const scoped = videoFacetSearch(search, request);
      const { bits, count } = scoped.channelId == null ? this.#match(scoped.filter) : this.#bitsOf(this.#channelMatches(scoped.filter, scoped.channelId));
      // The values the filter itself asks of the facet's column: the matches hold no other.
      const asked = this.#valueConditions(scoped.filter).find((condition) => condition.name === request.facet)?.values;
      try {
        switch (request.facet) {
          case 'category':
            return countValues(bits, count, this.#category, String, asked as number[] | undefined);
          case 'videoType':
            return countValues(bits, count, this.#videoType, (code) => (code === 2 ? 'short' : 'video'), asked as number[] | undefined);
          case 'channelCountry':
            return countValues(bits, count, this.#channelCountry, String, asked as string[] | undefined);
          case 'month':
            return countMonths(bits, this.#createAt.values);
        }
      } finally {
        // A channel's matches are the search's own; a filter's belong to the result cache.
        if (scoped.channelId != null) this.#pool.give(bits);
      }
    });
  }

  /**
   * Newest first bounded only by dates (an end date, a start): counted on the order by two binary
   * searches and walked from the bound, without the filter's bitset (see CreatorIndex). Null
   * otherwise. One condition on a single-valued column beside the dates is #countWithinDates'; for
   * the rest the bitset of the whole filter is cheaper than the other conditions' bits counted
   * within the dates, since videos' slots follow their dates and a date window narrows every word
   * the filter touches (measured at ×10, 2026-11-26: the end date workload 292 → 268 req/s the
   * other way, before ranks).
   */
  #boundOnOrderOnly(search: VideoSearch): Match | null {
    if (search.sort !== 'NEWEST' || search.channelId != null) return null;
    for (const [name] of conditionsOf(search.filter)) if (name !== 'createAtStart' && name !== 'createAtEnd') return null;
    const bounds = instantBounds(search.filter);
    return { bits: this.table.alive.words, count: this.#newest.countKeyRange(bounds.min ?? -Infinity, bounds.max ?? Infinity, bounds.maxExclusive === true) };
  }

  /**
   * Newest first with dates and one more condition, on a single-valued column (1–2 categories, a
   * type, channel countries): the total is the rows of those values within the dates, counted on
   * the order by their codes (from the column's ranks once counted twice in a version, own-key.ts),
   * with no bitset of the filter: a new end date made one over every video (8.6 ms a search at
   * 20M, 2026-11-28). Null for any other search.
   */
  #countWithinDates(search: VideoSearch, probe?: SearchProbe): number | null {
    if (search.sort !== 'NEWEST' || search.channelId != null) return null;
    const bounds = instantBounds(search.filter);
    if (bounds.min === undefined && bounds.max === undefined) return null;
    const conditions = this.#valueConditions(search.filter);
    const others = conditionsOf(search.filter).filter(([name]) => name !== 'createAtStart' && name !== 'createAtEnd');
    if (conditions.length !== 1 || others.length !== 1) return null;
    const [{ name, column, values }] = conditions;
    return this.#boundedCounts.countCodes(filterKey(search.filter), name, this.table.version, this.#newest, column.slotCodes, column.wantedCodes(values), bounds, probe?.boundCount);
  }

  /**
   * A text query alone, or with a video type, newest first (the video text workload): counted from
   * the live videos of each combination of title, description and type whose title or description
   * contains the query, a few thousand combinations where the rows' bits cost 20–50 ms at 20M
   * videos (a fragment of a common word matches a tenth of them, or all). Its page is then #pageCounted's. Null for
   * any other search, or while the combinations are too many to keep.
   */
  #countTextOnly(search: VideoSearch): number | null {
    const asked = this.#textOnly(search, 'NEWEST');
    if (!asked) return null;
    const { text, types } = asked;
    return this.#whileTextsMatch(text, false, (inTitle, inDescription) =>
      this.#combinations.count((title, description, type) => (inTitle[title] !== 0 || inDescription[description] !== 0) && (types === null || types[type] === 1)),
    );
  }

  /**
   * Relevance with a text query alone, or with a video type (the REST video search with a query):
   * each tier counted from the combinations of title, description and type (a combination's tier
   * is its title's, 3 equal to the query, 2 starting with it, 1 containing it, else 0 when its
   * description contains it), and the page walked along the most-played order tier by tier,
   * testing each row's codes, where the four tiers' bits over every video cost 20–170 ms a search
   * at 20M; each tier's walk starts at the most plays its combinations' rows have had. A title tier
   * too rare for a walk, or whose walk gave up (its rows far below that top), is taken from its
   * titles' rows; a description-only tier either way leaves the search to the bits (#segments).
   * Null then, and for any other search.
   */
  #pageTextTiers(search: VideoSearch, window: PageRequest, probe?: SearchProbe): IndexPage | null {
    const asked = this.#textOnly(search, 'RELEVANCE');
    if (!asked) return null;
    const { text, types } = asked;
    // Each tier's rows, and the most plays any of them may have: its walk starts there.
    const counts = [0, 0, 0, 0];
    const tops = [-Infinity, -Infinity, -Infinity, -Infinity];
    this.#whileTextsMatch(text, true, (titles, descriptions) =>
      this.#combinations.forEach((title, description, type, rows, top) => {
        if (types !== null && types[type] !== 1) return;
        const tier = titles[title] !== 0 ? titles[title] : descriptions[description] !== 0 ? 0 : -1;
        if (tier < 0) return;
        counts[tier] += rows;
        tops[tier] = Math.max(tops[tier], top);
      }),
    );
    const total = counts[0] + counts[1] + counts[2] + counts[3];
    const budget = this.#testBudget(window, probe);
    const needs = tierRowsRead(counts, window);
    // A tier whose walk would pass its budget, were its rows spread evenly over the order below its top.
    const below = (tier: number) => (Number.isFinite(tops[tier]) ? this.#mostPlayed.countKeyRange(-Infinity, tops[tier], false) : this.table.aliveCount);
    const rare = counts.map((count, tier) => needs[tier] > 0 && (needs[tier] * below(tier)) / count > budget);
    if (rare[0]) return null;
    const words = this.table.words;
    const tierBits = (tier: number) => {
      const bits = this.#pool.takeUncleared(words);
      copyInto(bits, this.#title.rowsMatching(text, words, TITLE_TIERS[tier - 1]), words);
      // The tier above's titles match too (equal ones start with the query): their rows are its.
      if (tier < 3 && counts[tier + 1] > 0) andNotInto(bits, this.#title.rowsMatching(text, words, TITLE_TIERS[tier]), words);
      andInto(bits, types === null ? this.table.alive.words : this.#match({ videoType: search.filter.videoType }).bits, words);
      return bits;
    };
    const bits = counts.map((_, tier) => (rare[tier] ? tierBits(tier) : null));
    try {
      for (;;) {
        /** The tier whose walk tested the last row (the one that gave up, when one does). */
        let walking = -1;
        try {
          return this.#whileTextsMatch(text, true, (titles, descriptions) => {
            const titleOf = (slot: number) => titles[this.#title.entryOf(slot) + 1];
            const segments: Segment[] = [3, 2, 1, 0].map((tier) => {
              // Above its top, no row of the tier: a title whose videos are played little is found where they are.
              const keyRange = Number.isFinite(tops[tier]) ? keyRangeOf({ max: tops[tier] }) : undefined;
              const segment = { rank: tier, count: counts[tier], order: this.#mostPlayed, keyRange };
              const held = bits[tier];
              if (held !== null) return { ...segment, bits: held };
              const row = this.#rowTest(search, budget, null);
              const inTier =
                tier > 0 ? (slot: number) => titleOf(slot) === tier : (slot: number) => titleOf(slot) === 0 && descriptions[this.#description.entryOf(slot) + 1] !== 0;
              const accept = (slot: number) => {
                walking = tier;
                return row(slot) && inTier(slot);
              };
              return { ...segment, bits: NO_WORDS, accept };
            });
            return indexPageOf(pageSegments(segments, window, probe), total);
          });
        } catch (error) {
          if (error !== ABANDONED) throw error;
          if (walking <= 0) return null;
          // A walk that gave up though its tier is not rare: its rows gather far below its top (a
          // few of the tier's videos played much, most little). Its bits are tested a row at a time
          // by the order's own walk, a bit in 2.5 MB at 20M where a row's text code is a miss in 40
          // MB, which ranks them once it has read as many rows as they hold (SortOrder.select);
          // ranking them at once (a heap over 1.4M rows) took 40-70 ms at ×10, twice the walk.
          bits[walking] = tierBits(walking);
        }
      }
    } finally {
      this.#pool.give(...bits.filter((held) => held !== null));
    }
  }

  /** A text query alone or with a video type, sorted by `sort`, with the type's codes: what the combinations count. Null otherwise. */
  #textOnly(search: VideoSearch, sort: VideoSearch['sort']): { text: string; types: Uint8Array | null } | null {
    if (search.sort !== sort || search.channelId != null || !this.#combinations.kept) return null;
    const { query, videoType: _type, ...others } = search.filter;
    if (!query || conditionsOf(others).length > 0) return null;
    // The type is the one value condition left, spelled as #match spells it.
    const [type] = this.#valueConditions(search.filter);
    return { text: lowerCase(query), types: type ? type.column.wantedCodes(type.values) : null };
  }

  /** Runs `use` with the title entries and the description entries containing `text` marked by stored code (titles by tier when `ranked`). */
  #whileTextsMatch<T>(text: string, ranked: boolean, use: (titles: Uint8Array, descriptions: Uint8Array) => T): T {
    return this.#title.whileMatching(text, (_, titles) => this.#description.whileMatching(text, (__, descriptions) => use(titles, descriptions)), ranked);
  }

  /**
   * The page of a search counted without its bitset (#countWithinDates, #countTextOnly): walked
   * from the bound testing each row, or, past the test's budget (rare values), along the bits of
   * the conditions but the dates (cached for every date; they reach beyond the dates, which the
   * walk from the bound never reads).
   */
  #pageCounted(search: VideoSearch, window: PageRequest, total: number, probe?: SearchProbe): IndexPage {
    const bounds = instantBounds(search.filter);
    const keyRange = keyRangeOf(bounds);
    // No match (a fragment of short videos' titles asked among the others): a walk would test rows
    // up to its budget and then make the bits that hold nothing.
    if (total === 0) return indexPageOf(pageSegments([{ rank: 0, bits: NO_WORDS, count: 0, slots: [], order: this.#newest, keyRange }], window, probe), 0);
    // The rows a walk reads to fill the window, were the matches spread evenly over the dates: one
    // expected to pass its budget makes the bits at once.
    const within = this.#newest.countKeyRange(bounds.min ?? -Infinity, bounds.max ?? Infinity, bounds.maxExclusive === true);
    const walkWorthIt = (windowRows(window) * within) / total <= this.#testBudget(window, probe);
    const tested = walkWorthIt ? this.#pageByTest(search, window, probe) : null;
    if (tested) return indexPageOf(tested, total);
    const { createAtStart: _start, createAtEnd: _end, ...condition } = search.filter;
    const { bits, count } = this.#match(condition);
    const segment: Segment = { rank: 0, bits, count: total, held: count, order: this.#newest, keyRange };
    return indexPageOf(pageSegments([segment], window, probe), total);
  }

  /** The filter's conditions on the videos' single-valued columns, each with the values it asks for. */
  #valueConditions(filter: VideoFilter): ValueCondition[] {
    const conditions: ValueCondition[] = [];
    if (filter.categorys?.length) conditions.push({ name: 'category', column: this.#category as ValueIndex<string | number>, values: filter.categorys });
    if (filter.videoType) conditions.push({ name: 'videoType', column: this.#videoType as ValueIndex<string | number>, values: [filter.videoType === 'SHORT' ? 2 : 1] });
    if (filter.locations?.length) {
      conditions.push({ name: 'channelCountry', column: this.#channelCountry as ValueIndex<string | number>, values: filter.locations.map((code) => code.toUpperCase()) });
    }
    return conditions;
  }

  #match(filter: VideoFilter): Match {
    const key = filterKey(filter);
    const cached = this.#cache.get(key, this.table.version, this.table.words);
    if (cached) return cached;
    const match = new Matcher(this.table.words, this.#pool, this.table.alive.words);
    // The date window first: it narrows the words every other condition touches.
    match.range(this.#createAt, instantBounds(filter));
    for (const { column, values } of this.#valueConditions(filter)) match.values(column, values);
    if (filter.gender) match.values(this.#channelGender, [genderToCode(filter.gender)]);
    if (filter.query) match.text([this.#title, this.#description], lowerCase(filter.query));
    match.range(this.#channelFollowers, inclusiveBounds('count', filter.followerCountMin, filter.followerCountMax));
    if (needsOtherChannelConditions(filter)) {
      const channels = this.#channels.match(filter, this.#pool);
      const inChannels = (slot: number) => {
        const channel = this.#channelOf.data[slot];
        return channel !== -1 && (channels[channel >>> 5] & (1 << (channel & 31))) !== 0;
      };
      // Few videos left: check their channel one by one; else gather the videos of the channels.
      if (match.count() < this.table.aliveCount * FEW_VIDEOS) match.keep(inChannels);
      else match.computed((out) => this.#videosOf(channels, out));
      this.#pool.give(channels);
    }
    return this.#cache.keep(key, this.table.version, match.finish());
  }

  /**
   * The videos of one channel that match the filter (`Channel.videos`): the filter's matches, shared
   * by every channel of a page and cached, tested along the channel's own list of videos. A few
   * steps per video of the channel, and no memory kept per channel.
   */
  #channelMatches(filter: VideoFilter, channelId: string): number[] {
    const matches = this.#match(filter).bits;
    const slots: number[] = [];
    const channel = this.#channels.table.slotOf(channelId);
    const first = this.#channels.firstVideo.data;
    const next = this.#nextInChannel.data;
    for (let video = channel === -1 || channel >= first.length ? -1 : first[channel]; video !== -1; video = next[video]) {
      if ((matches[video >>> 5] & (1 << (video & 31))) !== 0) slots.push(video);
    }
    return slots;
  }

  /** A bitset of these slots, from the pool (the caller gives it back). */
  #bitsOf(slots: readonly number[]): { bits: Uint32Array; count: number } {
    const bits = this.#pool.take(this.table.words);
    for (const slot of slots) bits[slot >>> 5] |= 1 << (slot & 31);
    return { bits, count: slots.length };
  }

  /** out |= the videos of the channels in `channels`. */
  #videosOf(channels: Uint32Array, out: Uint32Array): void {
    const first = this.#channels.firstVideo.data;
    const next = this.#nextInChannel.data;
    for (let i = 0; i < channels.length; i++) {
      let word = channels[i];
      while (word !== 0) {
        const lowest = word & -word;
        const channel = (i << 5) + 31 - Math.clz32(lowest);
        for (let video = first[channel]; video !== -1; video = next[video]) out[video >>> 5] |= 1 << (video & 31);
        word ^= lowest;
      }
    }
  }

  /** Newest: one segment. Relevance: exact title 3, title prefix 2, title match 1, description only 0; each by plays. */
  #segments(search: VideoSearch, bits: Uint32Array, count: number, slots?: readonly number[], matchWindow?: WordWindow): Segment[] {
    if (search.sort === 'NEWEST') return [{ rank: 0, bits, count, slots, window: matchWindow, order: this.#newest, keyRange: keyRangeOf(instantBounds(search.filter)) }];
    const query = lowerCase(search.filter.query ?? '');
    const words = this.table.words;
    const tiers = [3, 2, 1].map((rank) => {
      const tier = this.#pool.takeUncleared(words);
      copyInto(tier, this.#title.rowsMatching(query, words, TITLE_TIERS[rank - 1]), words);
      return tier;
    });
    const higher = this.#pool.take(words);
    const rest = this.#pool.takeUncleared(words);
    copyInto(rest, bits, words);
    const segments: Segment[] = tiers.map((tier, i) => {
      andInto(tier, bits, words);
      andNotInto(tier, higher, words);
      orInto(higher, tier, words);
      return { rank: 3 - i, bits: tier, count: popcount(tier, words), order: this.#mostPlayed };
    });
    andNotInto(rest, higher, words);
    this.#pool.give(higher);
    segments.push({ rank: 0, bits: rest, count: popcount(rest, words), order: this.#mostPlayed });
    return segments;
  }

  /** Moves a video to another channel's list (-1: none). */
  #setChannel(slot: number, channel: number): void {
    const before = this.#channelOf.data[slot];
    if (before === channel) return;
    const first = this.#channels.firstVideo;
    const next = this.#nextInChannel.data;
    const prev = this.#prevInChannel.data;
    if (before !== -1) {
      if (prev[slot] === -1) first.data[before] = next[slot];
      else next[prev[slot]] = next[slot];
      if (next[slot] !== -1) prev[next[slot]] = prev[slot];
    }
    this.#channelOf.data[slot] = channel;
    if (channel !== -1) {
      first.ensure(channel + 1);
      const head = first.data[channel];
      next[slot] = head;
      prev[slot] = -1;
      if (head !== -1) prev[head] = slot;
      first.data[channel] = slot;
    }
  }

  /** Before a row changes (its orders find it by its key as they sorted it), or is added or removed. */
  #changing(slot: number): void {
    this.table.version++;
    if (!this.#loaded) return;
    this.#newest.touch(slot);
    this.#mostPlayed.touch(slot);
  }
}
