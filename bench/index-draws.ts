// The search index's time for each of the benchmark's own creator draws (bench/workloads.ts) on
// generated creators, without HTTP or PostgreSQL: the distribution and the costliest draws, each
// timed again. Through the service a workload's p99 is the searches queued behind its costly
// draws; this tells which draws those are and what they cost (npm run bench:draws; progress on stderr).
//   DRAWS_CREATORS   generated creators (default 1,000,000)
//   DRAWS_WORKLOADS  creator workloads (default creators-selective,graphql-creators,graphql-creator-facets)
//   DRAWS_COUNT      draws per workload (default 300)
//   DRAWS_SNAPSHOT   a file: the index is read from it when it exists, else built and written there
//                    (10M creators take minutes to build, seconds to read)
//   DRAWS_WRITES=1   a write before each search, so the orders hold changed rows as when the change
//                    feed is busy (default: each filter evaluated afresh, the orders unchanged)
import { closeSync, existsSync, openSync } from 'node:fs';
import { z } from 'zod';
import { assignableCategoryIds, demoCategories } from '../src/demo/categories.js';
import type { CreatorIndexRow } from '../src/domain/index-rows.js';
import type { CreatorSearch } from '../src/inputs/creators.js';
import { SnapshotReader, SnapshotRejected, SnapshotWriter } from '../src/search/primitives/snapshot-io.js';
import { SNAPSHOT_FORMAT } from '../src/search/runtime/snapshots.js';
import { CreatorIndex } from '../src/search/tables/creators.js';
import { creatorRow } from './generated-rows.js';
import { type Category, expandCategoryIds, type Session } from './specs.js';
import { selectWorkloads, sessionSequence, type Vocabulary } from './workloads.js';

const settings = z
  .object({
    DRAWS_CREATORS: z.coerce.number().int().positive().default(1_000_000),
    DRAWS_WORKLOADS: z.string().min(1).default('creators-selective,graphql-creators,graphql-creator-facets'),
    DRAWS_COUNT: z.coerce.number().int().positive().default(300),
    DRAWS_SNAPSHOT: z.string().min(1).optional(),
    DRAWS_WRITES: z.enum(['0', '1']).default('0'),
  })
  .parse(process.env);
const creators = settings.DRAWS_CREATORS;
const workloads = selectWorkloads(settings.DRAWS_WORKLOADS.split(','));
const count = settings.DRAWS_COUNT;
const snapshot = settings.DRAWS_SNAPSHOT;
const writes = settings.DRAWS_WRITES === '1';

const categoryIds = assignableCategoryIds(demoCategories());

/**
 * The index from `path` (how many creators it was built from, then the index, under the service's
 * snapshot format), or null when the file holds another format or number of creators: built again.
 */
function readIndex(path: string): CreatorIndex | null {
  const input = SnapshotReader.open(path);
  try {
    if (input.version !== SNAPSHOT_FORMAT || input.value<{ creators: number }>().creators !== creators) return null;
    const index = new CreatorIndex();
    index.load(input);
    input.finish();
    return index;
  } catch (error) {
    if (error instanceof SnapshotRejected) return null;
    throw error;
  } finally {
    input.close();
  }
}

function buildOrRead(): { index: CreatorIndex; sample: CreatorIndexRow[] } {
  const started = performance.now();
  const read = snapshot && existsSync(snapshot) ? readIndex(snapshot) : null;
  const index = read ?? new CreatorIndex();
  if (read) process.stderr.write(`read ${snapshot} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  else {
    if (snapshot && existsSync(snapshot)) process.stderr.write(`${snapshot} holds another build or number of creators: building again\n`);
    for (let i = 0; i < creators; i++) {
      index.upsert(creatorRow(i, categoryIds));
      if (i > 0 && i % 1_000_000 === 0) process.stderr.write(`built ${i.toLocaleString('en')} creators\n`);
    }
    index.finishLoad();
    process.stderr.write(`built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    if (snapshot) {
      const fd = openSync(snapshot, 'w');
      try {
        const out = new SnapshotWriter(fd, SNAPSHOT_FORMAT);
        out.value({ creators });
        index.save(out);
        out.finish();
      } finally {
        closeSync(fd);
      }
    }
  }
  // The vocabulary's rows: a thousand spread over the set (generated again: the index keeps no records).
  const sample = Array.from({ length: 1_000 }, (_, k) => creatorRow(Math.floor((k * creators) / 1_000), categoryIds));
  return { index, sample };
}

/** What readVocabulary reads from the bench database, taken from the generated rows instead (creator workloads only). */
function vocabularyOf(sample: CreatorIndexRow[]): Vocabulary {
  const weighted = (values: string[]) => {
    const counts = new Map<string, number>();
    for (const value of values) if (value !== '') counts.set(value, (counts.get(value) ?? 0) + 1);
    return [...counts].sort(([a], [b]) => (a < b ? -1 : 1));
  };
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const published = sample.map((row) => row.lastPublishAt).filter((ms) => !Number.isNaN(ms));
  const records = demoCategories();
  const levelOf = (id: number): number => {
    const parent = records.find((record) => record.id === id)?.parent_id ?? null;
    return parent === null ? 1 : levelOf(parent) + 1;
  };
  const taxonomy: Category[] = records.map((record) => ({ id: record.id, parentId: record.parent_id ?? null, level: levelOf(record.id) }));
  return {
    creatorCountries: weighted(sample.map((row) => row.country)),
    creatorLanguages: weighted(sample.map((row) => row.language)),
    channelCountries: [],
    nameTexts: sample.slice(0, 400).flatMap((row) => [row.username, row.fullName]).filter(Boolean),
    videoTexts: [],
    taxonomy,
    videoCategoryIds: [],
    creatorDays: { first: day(Math.min(...published)), last: day(Math.max(...published)) },
    videoDays: { first: day(0), last: day(0) },
    liveLanguages: [],
    liveGames: [],
    nodeKeys: { Creator: [], Channel: [], Video: [] },
  };
}

function main(): void {
  const { index, sample } = buildOrRead();
  const vocab = vocabularyOf(sample);
  const changes = Array.from({ length: 64 }, (_, k) => creatorRow(Math.floor((k * 7919) % creators), categoryIds));
  let change = 0;
  // Either way the filter's cached match is gone: a write changes rows, a version bump only says so.
  const afresh = writes ? () => index.upsert(changes[change++ % changes.length]) : () => void index.table.version++;
  const searchOf = (session: Session & { kind: 'creators' | 'creatorFacets' }): CreatorSearch => {
    const { categoryIds: categories, ...filter } = session.filter;
    return { platform: 'twitter', filter, categoryIds: categories ? expandCategoryIds(categories, vocab.taxonomy) : null, sort: session.sort };
  };
  const run = (session: Session) => {
    if (session.kind !== 'creators' && session.kind !== 'creatorFacets') throw new Error(`${session.kind}: only creator workloads are drawn here`);
    const search = searchOf(session);
    afresh();
    const started = performance.now();
    // Facets first, as the service counts them (src/search/runtime/search-index.ts): they make the
    // filter's whole match, which the page then takes from the cache.
    if (session.kind === 'creatorFacets') {
      index.facets(search, [
        { facet: 'country', excludeOwn: false },
        { facet: 'gender', excludeOwn: false },
        { facet: 'followerCount', excludeOwn: false, edges: session.edges },
      ]);
    }
    const page = index.search(search, { first: session.pageSize, offset: 0 });
    return { ms: performance.now() - started, total: page.total };
  };
  process.stdout.write(`${creators.toLocaleString('en')} generated creators, ${count} draws a workload, ${writes ? 'a write' : 'the cache cleared'} before each search; ms a search\n`);
  for (const workload of workloads) {
    const draw = sessionSequence(workload, vocab, 'bench');
    // Once untimed first: the first searches of a kind pay for compiling their code.
    for (let i = 0; i < count; i++) run(draw(i));
    const timed = Array.from({ length: count }, (_, i) => ({ i, ...run(draw(i)) }));
    const sorted = timed.map((t) => t.ms).sort((a, b) => a - b);
    const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))].toFixed(2);
    const mean = sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length;
    process.stdout.write(`\n${workload.id}: mean ${mean.toFixed(2)}, p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}\n`);
    // The costliest again, three times each: a first run may have met a collection or a cold cache.
    for (const { i, ms, total } of [...timed].sort((a, b) => b.ms - a.ms).slice(0, 8)) {
      const again = [0, 1, 2].map(() => run(draw(i)).ms.toFixed(1)).join(' / ');
      process.stdout.write(`  #${i} ${ms.toFixed(1)} (again ${again}), ${total} rows: ${JSON.stringify((draw(i) as { filter: unknown }).filter)} by ${(draw(i) as { sort: string }).sort}\n`);
    }
  }
}

main();
