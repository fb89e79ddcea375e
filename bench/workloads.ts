// The benchmark's workloads: each draws one session's parameters per call from a seeded PRNG over
// a vocabulary sampled from the bench database (countries present, real name fragments, the
// taxonomy, the data's date ranges), so every system replays the very same sequence of requests.
import { DemoRandom } from '../src/demo/random.js';
import type { SystemName } from './clients.js';
import type { Category, CreatorFilter, Gender, LiveFilter, NodeType, Session, VideoFilter } from './specs.js';

type Weighted<T> = [T, number][];

/** What the draws pick from, read from the database once at start (database.ts). */
export interface Vocabulary {
  creatorCountries: Weighted<string>;
  creatorLanguages: Weighted<string>;
  channelCountries: Weighted<string>;
  /** Usernames and full names of a sample of creators. */
  nameTexts: string[];
  /** Titles and descriptions of a sample of videos. */
  videoTexts: string[];
  taxonomy: Category[];
  videoCategoryIds: number[];
  /** UTC days (YYYY-MM-DD) spanned by creators' last_publish_at and videos' create_at. */
  creatorDays: { first: string; last: string };
  videoDays: { first: string; last: string };
  liveLanguages: Weighted<string>;
  liveGames: Weighted<string>;
  /** Keys of a sample of existing rows of each type, for lookups. */
  nodeKeys: Record<NodeType, string[]>;
}

export interface Workload {
  /** Short name for BENCH_WORKLOADS and the tables. */
  id: string;
  name: string;
  /** What a session draws, for the results file. */
  detail: string;
  /** How the systems are asked, where that is not obvious (printed under the table). */
  note?: string;
  /** The systems that can answer it, where not every one can (the rest are not asked). */
  systems?: readonly SystemName[];
  draw(rng: DemoRandom, vocab: Vocabulary): Session;
}

const DAY_MS = 86_400_000;
const GENDERS: Gender[] = ['UNKNOWN', 'MALE', 'FEMALE'];
const PAGE_SIZE = 20;
/** The follower histogram's edges: the decades a UI would show. */
const FOLLOWER_EDGES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];
const NODE_TYPES: NodeType[] = ['Creator', 'Channel', 'Video'];
const LOOKUPS = 100;
const ILIKE_NOTE =
  'PostGraphile matches with `includesInsensitive` (ILIKE on the bare column), which the schema\'s `lower(…)` trigram indexes, used by the service and the floor, do not serve';

const weightedPick = (rng: DemoRandom, entries: Weighted<string>) => rng.weighted(entries);
const weightedSample = (rng: DemoRandom, entries: Weighted<string>, count: number) => {
  const picked = new Set<string>();
  for (let tries = 0; picked.size < Math.min(count, entries.length) && tries < 100; tries++) picked.add(weightedPick(rng, entries));
  return [...picked];
};

/** A 3–5 character substring of a real name or title, without blanks at its ends. */
function fragment(rng: DemoRandom, texts: readonly string[]): string {
  for (;;) {
    const text = rng.pick(texts);
    const length = rng.int(3, 5);
    if (text.length < length) continue;
    const start = rng.int(0, text.length - length);
    const piece = text.slice(start, start + length);
    if (piece.trim() === piece && /\p{L}/u.test(piece)) return piece;
  }
}

/** Log-uniform follower bounds: a minimum from 1,000 to 5 million, sometimes a maximum 3–3,000 times it. */
function followerBounds(rng: DemoRandom, into: { followerCountMin?: number; followerCountMax?: number }): void {
  into.followerCountMin = Math.round(rng.logUniform(1_000, 5_000_000));
  if (rng.chance(0.4)) into.followerCountMax = Math.round(into.followerCountMin * rng.logUniform(3, 3_000));
}

/** A window of `minDays`–`maxDays` whole UTC days inside `range`. */
function dayWindow(rng: DemoRandom, range: { first: string; last: string }, minDays: number, maxDays: number) {
  const first = Date.parse(`${range.first}T00:00:00Z`);
  const last = Date.parse(`${range.last}T00:00:00Z`);
  const days = rng.int(minDays, maxDays);
  const start = first + rng.int(0, Math.max(0, Math.round((last - first) / DAY_MS) - days)) * DAY_MS;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { start: day(start), end: day(Math.min(last, start + (days - 1) * DAY_MS)) };
}

/** Creator filters, each a function adding one condition; the selective workload combines several. */
const creatorConditions: ((rng: DemoRandom, vocab: Vocabulary, filter: CreatorFilter) => void)[] = [
  (rng, vocab, f) => (f.locations = weightedSample(rng, vocab.creatorCountries, rng.int(1, 3))),
  (rng, _vocab, f) => followerBounds(rng, f),
  (rng, _vocab, f) => (f.gender = rng.pick(GENDERS)),
  (_rng, _vocab, f) => (f.verified = true),
  (_rng, _vocab, f) => (f.hasEmail = true),
  (rng, _vocab, f) => (f.avgEngagementRateMin = Math.round(rng.logUniform(0.2, 8) * 100) / 100),
  (rng, vocab, f) => (f.categoryIds = rng.sample(vocab.taxonomy.filter((c) => c.level > 1).map((c) => c.id), rng.int(1, 3))),
  (rng, vocab, f) => {
    const { start, end } = dayWindow(rng, vocab.creatorDays, 14, 240);
    f.createAtStart = start;
    if (rng.chance(0.5)) f.createAtEnd = end;
  },
  (rng, vocab, f) => (f.languages = weightedSample(rng, vocab.creatorLanguages, rng.int(1, 2))),
  (rng, _vocab, f) => (f.recentMonthPublishCountMin = rng.int(1, 60)),
];

/** A 3–5-character fragment of a sampled title or description, 30 % of the time with a video type. */
function videoTextFilter(rng: DemoRandom, vocab: Vocabulary): VideoFilter {
  return { query: fragment(rng, vocab.videoTexts), ...(rng.chance(0.3) ? { videoType: rng.pick(['VIDEO', 'SHORT'] as const) } : {}) };
}

/** Few or no filters: a third of the time none, else one common condition. */
function broadFilter(rng: DemoRandom, vocab: Vocabulary): CreatorFilter {
  const filter: CreatorFilter = {};
  if (rng.chance(0.35)) return filter;
  rng.pick([
    () => (filter.locations = [weightedPick(rng, vocab.creatorCountries)]),
    () => (filter.followerCountMin = Math.round(rng.logUniform(1_000, 1_000_000))),
    () => (filter.verified = true),
    () => (filter.gender = rng.pick(GENDERS)),
    () => (filter.languages = [weightedPick(rng, vocab.creatorLanguages)]),
  ])();
  return filter;
}

function combinedFilter(rng: DemoRandom, vocab: Vocabulary, count: number): CreatorFilter {
  const filter: CreatorFilter = {};
  for (const add of rng.sample(creatorConditions, count)) add(rng, vocab, filter);
  return filter;
}

function videoChannelFilter(rng: DemoRandom, vocab: Vocabulary): VideoFilter {
  const filter: VideoFilter = {
    categorys: rng.sample(vocab.videoCategoryIds, rng.int(1, 2)),
  };
  const { start, end } = dayWindow(rng, vocab.videoDays, 7, 120);
  filter.createAtStart = start;
  filter.createAtEnd = end;
  if (rng.chance(0.7)) filter.locations = weightedSample(rng, vocab.channelCountries, rng.int(1, 2));
  if (!filter.locations || rng.chance(0.5)) followerBounds(rng, filter);
  if (rng.chance(0.2)) filter.gender = rng.pick(GENDERS);
  if (rng.chance(0.3)) filter.videoType = rng.pick(['VIDEO', 'SHORT'] as const);
  return filter;
}

/** A UTC day (YYYY-MM-DD) drawn uniformly within `range`. */
function dayWithin(rng: DemoRandom, range: { first: string; last: string }): string {
  return dayWindow(rng, range, 1, 1).start;
}

/**
 * A maximum on the order's own key, sometimes with a minimum below it, sometimes a country: the
 * page then lies deep in the order, where a walk from the top would test every row above it.
 */
function sortKeyBound(rng: DemoRandom, vocab: Vocabulary, sort: 'FOLLOWER_COUNT' | 'ENGAGEMENT_RATE'): CreatorFilter {
  const filter: CreatorFilter = {};
  if (sort === 'FOLLOWER_COUNT') {
    filter.followerCountMax = Math.round(rng.logUniform(1_000, 10_000_000));
    if (rng.chance(0.4)) filter.followerCountMin = Math.round(filter.followerCountMax / rng.logUniform(3, 3_000));
  } else {
    filter.avgEngagementRateMax = Math.round(rng.logUniform(0.1, 10) * 100) / 100;
    if (rng.chance(0.4)) filter.avgEngagementRateMin = Math.round((filter.avgEngagementRateMax / rng.logUniform(1.5, 20)) * 100) / 100;
  }
  if (rng.chance(0.3)) filter.locations = [weightedPick(rng, vocab.creatorCountries)];
  return filter;
}

function liveFilter(rng: DemoRandom, vocab: Vocabulary): LiveFilter {
  if (rng.chance(0.4)) return {};
  return rng.pick([
    (): LiveFilter => ({ language: weightedPick(rng, vocab.liveLanguages) }),
    (): LiveFilter => ({ gameId: weightedPick(rng, vocab.liveGames) }),
    (): LiveFilter => ({ type: 'LIVE' }),
    (): LiveFilter => ({ language: weightedPick(rng, vocab.liveLanguages), type: 'LIVE' }),
  ])();
}

export const workloads: Workload[] = [
  {
    id: 'creators-broad',
    name: 'creator search, few or no filters',
    detail: 'a third of the time no filter, else one of: a country, a follower minimum (log-uniform 1k–1M), verified, a gender, a language; page 1 of 20 by followers',
    draw: (rng, vocab) => ({ kind: 'creators', door: 'rest', paging: 'offset', filter: broadFilter(rng, vocab), sort: 'FOLLOWER_COUNT', pageSize: PAGE_SIZE, pages: 1 }),
  },
  {
    id: 'creators-selective',
    name: 'creator search, 3–6 filters',
    detail: '3–6 of: 1–3 countries, follower bounds (minimum log-uniform 1k–5M, sometimes a maximum 3–3,000× it), gender, verified, has email, engagement-rate minimum (log-uniform 0.2–8 %), 1–3 level-2/3 categories, a last-publish window, 1–2 languages, a recent-posts minimum; by followers (¾) or engagement rate',
    draw: (rng, vocab) => ({
      kind: 'creators',
      door: 'rest',
      paging: 'offset',
      filter: combinedFilter(rng, vocab, rng.int(3, 6)),
      sort: rng.chance(0.75) ? 'FOLLOWER_COUNT' : 'ENGAGEMENT_RATE',
      pageSize: PAGE_SIZE,
      pages: 1,
    }),
  },
  {
    id: 'creators-name',
    name: 'creator search, name fragment',
    detail: '`query` = a 3–5-character substring of a sampled username or full name, sometimes with one broad filter; by followers',
    note: `service asked for \`sort_by: "follower_count"\` (relevance has no PostGraphile equivalent); ${ILIKE_NOTE}`,
    draw: (rng, vocab) => ({
      kind: 'creators',
      door: 'rest',
      paging: 'offset',
      filter: { ...(rng.chance(0.3) ? broadFilter(rng, vocab) : {}), query: fragment(rng, vocab.nameTexts) },
      sort: 'FOLLOWER_COUNT',
      pageSize: PAGE_SIZE,
      pages: 1,
    }),
  },
  {
    id: 'creators-paging',
    name: 'creator search, pages 1–10 of one filter',
    detail: 'pages 1–10 (20 a page, each with its total) of one broad or two-condition filter',
    draw: (rng, vocab) => ({
      kind: 'creators',
      door: 'rest',
      paging: 'offset',
      filter: rng.chance(0.5) ? broadFilter(rng, vocab) : combinedFilter(rng, vocab, 2),
      sort: 'FOLLOWER_COUNT',
      pageSize: PAGE_SIZE,
      pages: 10,
    }),
  },
  {
    id: 'videos-filtered',
    name: 'video search, category + dates + channel filters',
    detail: '1–2 video categories present in the data, a 7–120-day window, channel countries and/or channel follower bounds, sometimes channel gender and video type; newest first',
    draw: (rng, vocab) => ({ kind: 'videos', door: 'rest', filter: videoChannelFilter(rng, vocab), pageSize: PAGE_SIZE, pages: 1 }),
  },
  {
    id: 'videos-text',
    name: 'video search, title/description fragment',
    detail: '`query` = a 3–5-character substring of a sampled title or description, sometimes a video type; newest first',
    note: `service asked through GraphQL \`videos(filter: {query}, sortBy: NEWEST)\`: REST video search has no sort and a query means relevance; ${ILIKE_NOTE}`,
    draw: (rng, vocab) => ({ kind: 'videos', door: 'graphql', filter: videoTextFilter(rng, vocab), pageSize: PAGE_SIZE, pages: 1 }),
  },
  {
    id: 'videos-relevance',
    name: 'REST video search with a query, by relevance',
    detail: '`query` = a 3–5-character substring of a sampled title or description, sometimes a video type; REST, ranked by relevance (title equal, starting with, containing the query, then the rest; each by plays)',
    note: "PostGraphile has no relevance order and is not asked; the floor orders by the SQL path's rank expression (`CASE` on `lower(title)`, then `play_count`, then `video_id`)",
    systems: ['service', 'floor'],
    draw: (rng, vocab) => ({ kind: 'videos', door: 'rest', filter: videoTextFilter(rng, vocab), pageSize: PAGE_SIZE, pages: 1 }),
  },
  {
    id: 'creators-follower-max',
    name: 'creator search by followers, follower maximum',
    detail: 'a follower maximum (log-uniform 1k–10M), 40 % of the time a minimum 3–3,000 times below it, 30 % a country; page 1 of 20 by followers',
    draw: (rng, vocab) => ({ kind: 'creators', door: 'rest', paging: 'offset', filter: sortKeyBound(rng, vocab, 'FOLLOWER_COUNT'), sort: 'FOLLOWER_COUNT', pageSize: PAGE_SIZE, pages: 1 }),
  },
  {
    id: 'creators-engagement-bound',
    name: 'creator search by engagement rate, engagement-rate maximum',
    detail: 'an engagement-rate maximum (log-uniform 0.1–10 %), 40 % of the time a minimum 1.5–20 times below it, 30 % a country; page 1 of 20 by engagement rate',
    draw: (rng, vocab) => ({ kind: 'creators', door: 'rest', paging: 'offset', filter: sortKeyBound(rng, vocab, 'ENGAGEMENT_RATE'), sort: 'ENGAGEMENT_RATE', pageSize: PAGE_SIZE, pages: 1 }),
  },
  {
    id: 'videos-end-date',
    name: 'video search, newest first up to an end date',
    detail: '`create_at_end` = a day of the data (no start), half the time 1–2 video categories; newest first',
    note: 'video search has two orders, newest and relevance (by plays within title tiers, no bound on plays exists): the date is the one sort key a filter can bound',
    draw: (rng, vocab) => ({
      kind: 'videos',
      door: 'rest',
      filter: { createAtEnd: dayWithin(rng, vocab.videoDays), ...(rng.chance(0.5) ? { categorys: rng.sample(vocab.videoCategoryIds, rng.int(1, 2)) } : {}) },
      pageSize: PAGE_SIZE,
      pages: 1,
    }),
  },
  {
    id: 'live-pages',
    name: 'live streams, 5 pages following data.offset',
    detail: 'no filter, a language, a game, type live, or language + live; up to 5 pages of 20, each after the previous page cursor (data.offset)',
    draw: (rng, vocab) => ({ kind: 'live', filter: liveFilter(rng, vocab), pageSize: PAGE_SIZE, pages: 5 }),
  },
  {
    id: 'graphql-creators',
    name: 'GraphQL creators with totalCount',
    detail: '1–3 of the selective conditions; first 20 with totalCount, by followers',
    draw: (rng, vocab) => ({
      kind: 'creators',
      door: 'graphql',
      paging: 'offset',
      filter: combinedFilter(rng, vocab, rng.int(1, 3)),
      sort: 'FOLLOWER_COUNT',
      pageSize: PAGE_SIZE,
      pages: 1,
    }),
  },
  {
    id: 'graphql-walk',
    name: 'GraphQL cursor walk, 100 pages',
    detail: 'one broad filter, by followers (¾) or engagement rate; up to 100 pages of 20, each after the previous endCursor',
    note: 'each system follows its own endCursor; no totalCount',
    draw: (rng, vocab) => ({
      kind: 'creators',
      door: 'graphql',
      paging: 'cursor',
      filter: broadFilter(rng, vocab),
      sort: rng.chance(0.75) ? 'FOLLOWER_COUNT' : 'ENGAGEMENT_RATE',
      pageSize: PAGE_SIZE,
      pages: 100,
    }),
  },
  {
    id: 'graphql-video-channels',
    name: 'GraphQL videos, each with its channel\'s first 5 videos and their totalCount',
    detail: '1–2 video categories present in the data, half the time an end date, 30 % a video type; newest 20, each with `channel { videos(first: 5) { totalCount nodes { videoId title } } }` (newest first)',
    note: 'PostGraphile: `allVideos(filter, orderBy: [CREATE_AT_DESC, VIDEO_ID_DESC], first: 20) { nodes { videoId channelByChannelId { videosByChannelId(first: 5, orderBy: [CREATE_AT_DESC, VIDEO_ID_DESC]) { totalCount nodes { videoId title } } } } }`; no root totalCount on either side, so the nesting is what is measured',
    draw: (rng, vocab) => ({
      kind: 'videoChannels',
      filter: {
        categorys: rng.sample(vocab.videoCategoryIds, rng.int(1, 2)),
        ...(rng.chance(0.5) ? { createAtEnd: dayWithin(rng, vocab.videoDays) } : {}),
        ...(rng.chance(0.3) ? { videoType: rng.pick(['VIDEO', 'SHORT'] as const) } : {}),
      },
      pageSize: PAGE_SIZE,
      nestedFirst: 5,
      pages: 1,
    }),
  },
  {
    id: 'graphql-creator-facets',
    name: 'GraphQL creators with facets (country, gender, follower histogram)',
    detail: `1–3 of the selective conditions; first 20 by followers with totalCount and facets by country, gender and followers over edges ${FOLLOWER_EDGES.join(', ')} (7 buckets)`,
    note: 'PostGraphile: the page with `totalCount` and, on the same connection, `@graphile/pg-aggregates` `groupedAggregates(groupBy: [COUNTRY])` and `(groupBy: [GENDER])` with `distinctCount { userId }` (v0.1 has no plain grouped count; the user id is unique once the platform is fixed), and one aliased `allCreators(filter: <filter> and <bucket>) { totalCount }` per histogram bucket (pg-aggregates v0.1 has no range buckets)',
    draw: (rng, vocab) => ({
      kind: 'creatorFacets',
      filter: combinedFilter(rng, vocab, rng.int(1, 3)),
      sort: 'FOLLOWER_COUNT',
      edges: FOLLOWER_EDGES,
      pageSize: PAGE_SIZE,
      pages: 1,
    }),
  },
  {
    id: 'graphql-nodes',
    name: 'GraphQL nodes, 100 ids of mixed types',
    detail: `${LOOKUPS} keys, each a creator, a channel or a video (type uniform), drawn from 5,000 sampled rows of each type; answered in the order asked`,
    note: 'PostGraphile: one document with `allCreators`, `allChannels` and `allVideos`, each `filter: {<key>: {in: [...]}}` (one `= ANY` read per type, as the service batches its lookups; 100 aliased `…By<Key>` lookups would be 100 statements), rows put back in the order asked by the client; its own `nodes` takes its own ids',
    draw: (rng, vocab) => ({
      kind: 'nodes',
      refs: Array.from({ length: LOOKUPS }, () => {
        const type = rng.pick(NODE_TYPES);
        return { type, key: rng.pick(vocab.nodeKeys[type]) };
      }),
      pageSize: LOOKUPS,
      pages: 1,
    }),
  },
];

/**
 * The sessions of one workload as a replayable sequence: session i is the same for every system
 * that asks for it, whatever the order in which its connections ask.
 */
export function sessionSequence(workload: Workload, vocab: Vocabulary, seed: string): (index: number) => Session {
  const rng = new DemoRandom(`${seed}:${workload.id}`);
  const drawn: Session[] = [];
  return (index) => {
    while (drawn.length <= index) drawn.push(workload.draw(rng, vocab));
    return drawn[index];
  };
}

/** The workloads BENCH_WORKLOADS names (all when unset); an unknown id stops the run naming the known ones. */
export function selectWorkloads(ids: string[] | null): Workload[] {
  if (!ids) return workloads;
  const unknown = ids.filter((id) => !workloads.some((w) => w.id === id));
  if (unknown.length) throw new Error(`BENCH_WORKLOADS: unknown ${unknown.join(', ')}; known: ${workloads.map((w) => w.id).join(', ')}`);
  return workloads.filter((w) => ids.includes(w.id));
}
