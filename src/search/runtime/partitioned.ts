import { type PageArgs, pageDirection } from '../../domain/cursors.js';
import { type FacetAnswer, type FacetCount, type FacetRequest, type LiveStreamFacet, type RangeCount, valueCounts, type CreatorFacet, type VideoFacet } from '../../domain/facets.js';
import type { CreatorSearch } from '../../inputs/creators.js';
import type { LiveStreamFilter } from '../../inputs/live-streams.js';
import type { VideoSearch } from '../../inputs/videos.js';
import type { IndexPage, Search, SearchIndexStats, ServerRows } from '../types.js';

// The search index split into partitions (./partition.ts), each a Search of its own in a thread
// of its own, behind the one Search the service sees. A search goes to every partition at once;
// each answers the page as if it were the whole index but for the window widened to the offset
// plus the page (a partition cannot know which of its rows the others push off the page), and the
// answers merge: totals and facet counts add up, pages merge by each row's place in the order
// (IndexPage.sortKeys and the id).

export class PartitionedSearch implements Search {
  constructor(
    readonly parts: readonly Search[],
    readonly rows: ServerRows,
  ) {}

  get ready(): boolean {
    return this.parts.every((part) => part.ready);
  }

  async creators(search: CreatorSearch, page: PageArgs, facets?: readonly FacetRequest<CreatorFacet>[], caller?: string): Promise<IndexPage | null> {
    const window = widened(page);
    const answers = await Promise.all(this.parts.map((part) => part.creators(search, window, facets, caller)));
    return mergePages(page, answers);
  }

  async videos(search: VideoSearch, page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[], needsTotal?: boolean, caller?: string): Promise<IndexPage | null> {
    const window = widened(page);
    const answers = await Promise.all(this.parts.map((part) => part.videos(search, window, facets, needsTotal, caller)));
    return mergePages(page, answers);
  }

  async channelVideos(search: VideoSearch, channelIds: readonly string[], page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[], caller?: string): Promise<IndexPage[] | null> {
    const window = widened(page);
    const answers = await Promise.all(this.parts.map((part) => part.channelVideos(search, channelIds, window, facets, caller)));
    if (answers.some((answer) => answer === null)) return null;
    return channelIds.map((_, i) => mergePages(page, answers.map((answer) => answer![i]))!);
  }

  async liveStreams(filter: LiveStreamFilter, page: PageArgs, facets?: readonly FacetRequest<LiveStreamFacet>[], caller?: string): Promise<IndexPage | null> {
    const window = widened(page);
    const answers = await Promise.all(this.parts.map((part) => part.liveStreams(filter, window, facets, caller)));
    return mergePages(page, answers);
  }

  stats(): SearchIndexStats {
    const all = this.parts.map((part) => part.stats());
    const sum = (field: 'creators' | 'videos' | 'liveStreams') => (all.some((stats) => stats[field] === null) ? null : all.reduce((n, stats) => n + stats[field]!, 0));
    const lags = all.map((stats) => stats.lagMs);
    return {
      creators: sum('creators'),
      videos: sum('videos'),
      // Every partition holds every channel.
      channels: all[0].channels,
      liveStreams: sum('liveStreams'),
      lagMs: lags.some((lag) => lag === null) ? null : Math.max(...(lags as number[])),
      loadedFrom: all.some((stats) => stats.loadedFrom === 'database') ? 'database' : all[0].loadedFrom,
    };
  }

  async start(): Promise<void> {
    await settle(this.parts.map((part) => part.start()));
  }

  async refresh(): Promise<void> {
    await settle(this.parts.map((part) => part.refresh()));
  }

  async stop(): Promise<void> {
    await settle(this.parts.map((part) => part.stop()));
  }
}

/** Waits for every partition, then throws the first failure: none is left running unawaited. */
async function settle(work: Promise<void>[]): Promise<void> {
  const outcomes = await Promise.allSettled(work);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/** The window each partition answers: the offset and the page, from the same cursor, no offset. */
function widened(page: PageArgs): PageArgs {
  const { backward, limit } = pageDirection(page);
  const rows = (page.offset ?? 0) + limit;
  return { ...page, ...(backward ? { last: rows } : { first: rows }), offset: null };
}

/** The partitions' answers to `widened(page)` as the whole index's answer to `page`; null if any partition had none. */
function mergePages(page: PageArgs, answers: readonly (IndexPage | null)[]): IndexPage | null {
  if (answers.some((answer) => answer === null)) return null;
  const pages = answers as IndexPage[];
  const offset = page.offset ?? 0;
  const { backward, limit } = pageDirection(page);
  // Each partition's rows are in the order already: merged by taking the first of the heads.
  const rows = mergeOrdered(pages);
  // Rows beyond the widened window in some partition, or more rows than the window in all of them.
  const more = rows.length > offset + limit || pages.some((answer) => (backward ? answer.hasPreviousPage : answer.hasNextPage));
  const end = backward ? Math.max(0, rows.length - offset) : Math.min(rows.length, offset + limit);
  const start = backward ? Math.max(0, end - limit) : Math.min(rows.length, offset);
  const kept = rows.slice(start, end);
  const sortKeys = new Float64Array(kept.length * 2);
  kept.forEach(({ part, row }, i) => sortKeys.set(pages[part].sortKeys.subarray(2 * row, 2 * row + 2), 2 * i));
  const ids = kept.map(({ part, row }) => pages[part].ids[row]);
  const totals = pages.map((answer) => answer.total);
  const merged: IndexPage = {
    ids,
    sortKeys,
    hasNextPage: backward ? page.before != null : more,
    hasPreviousPage: backward ? more : page.after != null || offset > 0,
    total: totals.some((total) => total === null) ? null : totals.reduce((sum, total) => sum! + total!, 0),
  };
  if (pages[0].facets) merged.facets = pages[0].facets.map((_, i) => mergeFacet(pages.map((answer) => answer.facets![i])));
  return merged;
}

/**
 * The partitions' rows as one list in the order's sequence: every order is descending on its tier,
 * its key and then its id (bytewise: ids are ASCII), src/domain/orders.ts.
 */
function mergeOrdered(pages: readonly IndexPage[]): { part: number; row: number }[] {
  const heads = pages.map(() => 0);
  const merged: { part: number; row: number }[] = [];
  for (;;) {
    let best = -1;
    for (let part = 0; part < pages.length; part++) {
      if (heads[part] < pages[part].ids.length && (best === -1 || precedes(pages[part], heads[part], pages[best], heads[best]))) best = part;
    }
    if (best === -1) return merged;
    merged.push({ part: best, row: heads[best]++ });
  }
}

function precedes(a: IndexPage, i: number, b: IndexPage, j: number): boolean {
  if (a.sortKeys[2 * i] !== b.sortKeys[2 * j]) return a.sortKeys[2 * i] > b.sortKeys[2 * j];
  if (a.sortKeys[2 * i + 1] !== b.sortKeys[2 * j + 1]) return a.sortKeys[2 * i + 1] > b.sortKeys[2 * j + 1];
  return a.ids[i] > b.ids[j];
}

/** One facet's counts from every partition: value counts added up (and ordered as one index orders them), histogram buckets added up. */
function mergeFacet(answers: readonly FacetAnswer[]): FacetAnswer {
  const ranges = answers.find((answer) => answer.length > 0 && 'min' in answer[0]) as RangeCount[] | undefined;
  if (ranges) return ranges.map((bucket, i) => ({ ...bucket, count: answers.reduce((sum, answer) => sum + ((answer as RangeCount[])[i]?.count ?? 0), 0) }));
  return valueCounts((answers as FacetCount[][]).flat());
}
