// The search index alone, without HTTP or PostgreSQL: build time, memory, and the CPU time of one
// search per workload, on generated rows shaped like the scale set (node --import tsx bench/index-micro.ts).
//   MICRO_CREATORS (default 1,000,000), MICRO_VIDEOS (2,000,000), MICRO_CHANNELS (200,000)
import { assignableCategoryIds, demoCategories } from '../src/demo/categories.js';
import { makeChannel, makeVideo } from '../src/demo/videos.js';
import { parseDuration } from '../src/domain/durations.js';
import type { CreatorFilter, CreatorSearch } from '../src/inputs/creators.js';
import type { VideoFilter, VideoSearch } from '../src/inputs/videos.js';
import { CreatorIndex } from '../src/search/tables/creators.js';
import { VideoIndex } from '../src/search/tables/videos.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { cents, creatorRow } from './generated-rows.js';

const creators = Number(process.env.MICRO_CREATORS ?? 1_000_000);
const videos = Number(process.env.MICRO_VIDEOS ?? 2_000_000);
const channels = Number(process.env.MICRO_CHANNELS ?? 200_000);
// Typed arrays live outside the V8 heap: count both.
const mb = () => (process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers) / 1_048_576;
void parseDuration;

function time<T>(label: string, runs: number, work: () => T): T {
  let result = work();
  const started = performance.now();
  for (let i = 0; i < runs; i++) result = work();
  process.stdout.write(`  ${label.padEnd(58)} ${((performance.now() - started) / runs).toFixed(3)} ms\n`);
  return result;
}

async function main(): Promise<void> {
  const categoryIds = assignableCategoryIds(demoCategories());
  const heapBefore = mb();
  let started = performance.now();
  const creatorIndex = new CreatorIndex();
  for (let i = 0; i < creators; i++) {
    creatorIndex.upsert(creatorRow(i, categoryIds));
    if (i % 200_000 === 0 && i > 0) process.stderr.write(`creators ${i}\n`);
  }
  creatorIndex.finishLoad();
  global.gc?.();
  const creatorHeap = mb() - heapBefore;
  process.stdout.write(`creators: ${creators} rows, built in ${((performance.now() - started) / 1000).toFixed(1)} s, heap ${creatorHeap.toFixed(0)} MB\n`);

  started = performance.now();
  const videoIndex = new VideoIndex();
  const profiles = Array.from({ length: channels }, (_, i) => makeChannel(`scale:channel:${i}`, `UCscale${String(i).padStart(17, '0')}`));
  for (const profile of profiles) {
    const c = profile.record;
    videoIndex.upsertChannel({
      channelId: c.channel_id,
      country: (c.country ?? '').toUpperCase(),
      gender: { unknown: 0, male: 1, female: 2 }[c.gender ?? 'unknown'],
      followerCount: c.follower_count ?? 0,
      avgEngagementRate: cents(c.avg_engagement_rate),
      avgPlayCount: cents(c.avg_play_count),
      avgLikeCount: cents(c.avg_like_count),
      avgCommentCount: cents(c.avg_comment_count),
      recentMonthPublishCount: c.recent_month_publish_count ?? 0,
    });
  }
  for (let i = 0; i < videos; i++) {
    const v = makeVideo(`scale:video:${i}`, `sv${String(i).padStart(9, '0')}`, profiles[i % channels], i);
    videoIndex.upsert({
      videoId: v.video_id,
      channelId: v.channel_id,
      title: (v.title ?? '').toLowerCase(),
      description: (v.description ?? '').toLowerCase(),
      createAt: Date.parse(v.create_at),
      videoType: v.video_type === 'short' ? 2 : 1,
      categoryId: v.category_id ?? 0,
      playCount: v.play_count ?? 0,
    });
    if (i % 500_000 === 0 && i > 0) process.stderr.write(`videos ${i}\n`);
  }
  videoIndex.finishLoad();
  global.gc?.();
  process.stdout.write(
    `videos: ${videos} rows, ${channels} channels, built in ${((performance.now() - started) / 1000).toFixed(1)} s, heap ${(mb() - heapBefore - creatorHeap).toFixed(0)} MB\n` +
      `total heap of both indexes: ${(mb() - heapBefore).toFixed(0)} MB, RSS ${(process.memoryUsage().rss / 1_048_576).toFixed(0)} MB\n\n`,
  );

  const rng = seededRandom('micro');
  const creatorSearch = (filter: CreatorFilter, sort: CreatorSearch['sort'] = 'FOLLOWER_COUNT', categories: number[] | null = null): CreatorSearch => ({
    platform: 'twitter',
    filter,
    categoryIds: categories,
    sort,
  });
  const countries = ['US', 'GB', 'IN', 'BR', 'JP', 'DE', 'FR', 'KR'];
  process.stdout.write('one search, CPU time (the filter is evaluated afresh each run unless noted):\n');
  // A write between searches makes every search evaluate its filter afresh (no cached result).
  const updates = Array.from({ length: 64 }, () => creatorRow(rng.int(0, creators - 1), categoryIds));
  let nextUpdate = 0;
  const fresh = () => creatorIndex.upsert(updates[nextUpdate++ % updates.length]);
  time('(one write alone)', 50, fresh);
  time('creators, no filter, page 1', 50, () => (fresh(), creatorIndex.search(creatorSearch({}), { first: 20 })));
  time('creators, 2 countries + follower bound', 50, () =>
    (fresh(), creatorIndex.search(creatorSearch({ locations: [rng.pick(countries), rng.pick(countries)], followerCountMin: rng.int(1, 1e6) }), { first: 20 })),
  );
  time('creators, selective (5 filters)', 50, () =>
    (fresh(),
    creatorIndex.search(
      creatorSearch({ locations: ['US'], gender: 'FEMALE', verified: true, avgEngagementRateMin: 2, followerCountMin: 10_000, followerCountMax: 5e6 }),
      { first: 20 },
    )),
  );
  time('creators, name fragment (3-5 letters)', 50, () =>
    (fresh(), creatorIndex.search(creatorSearch({ query: rng.pick(['tech', 'emma', 'lucas', 'food', 'ravi', 'travel', 'mia']) }), { first: 20 })),
  );
  time('creators, name fragment, relevance order', 50, () =>
    (fresh(), creatorIndex.search(creatorSearch({ query: rng.pick(['tech', 'emma', 'lucas', 'food']) }, 'RELEVANCE'), { first: 20 })),
  );
  time('creators, paging session page 10 (cached filter)', 50, () =>
    creatorIndex.search(creatorSearch({ locations: ['US', 'GB'], followerCountMin: 1000 }), { first: 20, offset: 180 }),
  );
  time('creators, categories + date range', 50, () =>
    (fresh(), creatorIndex.search(creatorSearch({ createAtStart: '2026-05-01', createAtEnd: '2026-09-30' }, 'ENGAGEMENT_RATE', [rng.pick(categoryIds)]), { first: 20 })),
  );
  const logUniform = (min: number, max: number) => Math.round(Math.exp(Math.log(min) + rng.next() * (Math.log(max) - Math.log(min))));
  time('creators by followers, a follower maximum (log-uniform 1k-10M)', 50, () =>
    (fresh(), creatorIndex.search(creatorSearch({ followerCountMax: logUniform(1_000, 10_000_000) }), { first: 20 })),
  );
  time('creators by followers, a maximum + a country', 50, () =>
    (fresh(), creatorIndex.search(creatorSearch({ followerCountMax: logUniform(1_000, 10_000_000), locations: [rng.pick(countries)] }), { first: 20 })),
  );
  const edges = [1_000, 10_000, 50_000, 100_000, 500_000, 1_000_000];
  const facets = [
    { facet: 'country' as const, excludeOwn: false },
    { facet: 'gender' as const, excludeOwn: false },
    { facet: 'followerCount' as const, excludeOwn: false, edges },
  ];
  time('creator facets (country, gender, 7-bucket followers), no filter', 50, () => (fresh(), creatorIndex.facets(creatorSearch({}), facets)));
  for (const request of facets) time(`creator facet ${request.facet} alone, no filter`, 50, () => (fresh(), creatorIndex.facets(creatorSearch({}), [request])));
  time('creator facets, one country', 50, () => (fresh(), creatorIndex.facets(creatorSearch({ locations: [rng.pick(countries)] }), facets)));
  // Fine histograms (50 edges each, the most a request may give): most buckets straddle a bucket of the range index.
  const fine = [
    { facet: 'followerCount' as const, excludeOwn: false, edges: Array.from({ length: 50 }, (_, i) => Math.round(1_000 * 1.25 ** i)) },
    { facet: 'avgEngagementRate' as const, excludeOwn: false, edges: Array.from({ length: 50 }, (_, i) => i / 500) },
  ];
  for (const [label, filter] of [
    ['no filter', {}],
    ['one country', { locations: ['US'] }],
    ['followers >= 10k', { followerCountMin: 10_000 }],
    ['5 filters', { locations: ['US', 'GB'], gender: 2, verified: true, languages: ['en'], followerCountMin: 5_000 }],
  ] as const) {
    time(`creator histograms (2 x 50 edges), ${label}`, 20, () => (fresh(), creatorIndex.facets(creatorSearch(filter as CreatorFilter), fine)));
  }
  // The category facet: every category's rows looked up, or (few matches) each match's codes.
  for (const [label, filter] of [
    ['no filter', {}],
    ['one country + verified + 100k followers', { locations: ['GB'], verified: true, followerCountMin: 100_000 }],
  ] as const) {
    time(`creator facet category, ${label}`, 20, () => (fresh(), creatorIndex.facets(creatorSearch(filter as CreatorFilter), [{ facet: 'category', excludeOwn: false }])));
  }
  // Disjunctive facets (a shop's sidebar): every facet without its own conditions, on a filter with two of them.
  const disjunctive = [
    ...(['country', 'language', 'gender', 'category', 'verified', 'hasEmail'] as const).map((facet) => ({ facet, excludeOwn: true })),
    ...fine.map((request) => ({ ...request, excludeOwn: true })),
  ];
  time('creator facets, all 8 without their own conditions (follower + engagement minimums)', 20, () =>
    (fresh(), creatorIndex.facets(creatorSearch({ followerCountMin: logUniform(1_000, 100_000), avgEngagementRateMin: rng.int(1, 40) / 10 }), disjunctive)),
  );
  const freshVideo = () => videoIndex.upsertChannel({ channelId: `UCscale${String(rng.int(0, channels - 1)).padStart(17, '0')}`, country: 'US', gender: 1, followerCount: 5, avgEngagementRate: 1, avgPlayCount: 1, avgLikeCount: 1, avgCommentCount: 1, recentMonthPublishCount: 1 });
  const videoSearch = (filter: VideoFilter, sort: VideoSearch['sort'] = 'NEWEST'): VideoSearch => ({ filter, sort });
  time('videos, category + dates + channel country/followers', 50, () =>
    (freshVideo(),
    videoIndex.search(videoSearch({ categorys: [rng.int(1, 40)], createAtStart: '2026-06-01', createAtEnd: '2026-08-31', locations: ['US', 'GB'], followerCountMin: 10_000 }), { first: 20 })),
  );
  time('videos, text query, relevance', 50, () => (freshVideo(), videoIndex.search(videoSearch({ query: rng.pick(['review', 'guide', 'tech', 'best']) }, 'RELEVANCE'), { first: 20 })));
  time('videos, no filter, newest', 50, () => (freshVideo(), videoIndex.search(videoSearch({}), { first: 20 })));
}

await main();
