import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runImport } from '../src/cli/import.js';
import { seedDemo } from '../src/cli/seed.js';
import { decodeGlobalId, encodeGlobalId } from '../src/domain/global-ids.js';
import type { Search } from '../src/search/types.js';
import { writeThroughMedias } from '../src/store/medias.js';
import { seededRandom, type SeededRandom } from '../src/upstreams/seeded-random.js';
import { createTestApp, type TestApp } from './support/app.js';

// The graph (issue 21, items 1 and 2): lookups by key, Node and global ids, relations. Every answer
// is checked against plain SQL, with the search index loaded and without it, before and after
// random writes that reach the index through the change feed; and the statements an operation
// issues are counted, so an N+1 fails here.

const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
const modes = process.env.TEST_DATABASE_URL ? [{ thread: false }, { thread: true }] : [{ thread: false }];
/** Statements every request may issue around its work: key, limits, quota, the change feed. */
const background = /catalog_changes|pg_current_snapshot|pg_snapshot|quota_leases|"?accounts"?|api_keys|^(start|set) transaction|^(begin|commit|rollback)/i;

const NESTED = `query($first: Int) { videos(first: $first) { nodes { videoId channel { channelId videos(first: 5) { totalCount nodes { title } } } } } }`;

describe.each(modes)('the graph, with the index in its own thread: $thread', ({ thread }) => {
  let app: TestApp;
  let index: Search;
  let key: string;

  beforeAll(async () => {
    app = await createTestApp({ searchIndex: true, searchPollMs: 60_000, searchThread: thread });
    await seedDemo(app.store.db, quiet);
    index = app.services.search!;
    key = await app.newKey({ plan: 'pro', ratePerSecond: 100_000 });
    await index.refresh();
    expect(index.ready).toBe(true);
  }, 120_000);
  afterAll(() => app?.close());

  const gql = async (query: string, variables: Record<string, unknown> = {}) => {
    const answer = await app.graphql(query, variables, key);
    expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
    return answer.body.data;
  };
  /** The same operation with the index on and off (SQL path): both answers. */
  async function both(query: string, variables: Record<string, unknown> = {}) {
    const fromIndex = await gql(query, variables);
    app.services.search = null;
    try {
      return { fromIndex, fromSql: await gql(query, variables) };
    } finally {
      app.services.search = index;
    }
  }
  const statements = () => app.store.queries.filter((statement) => !background.test(statement));
  async function counted<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    app.store.queries.length = 0;
    const result = await work();
    return { result, statements: statements() };
  }
  const rows = <T>(query: ReturnType<typeof sql<T>>) => query.execute(app.store.db).then((result) => result.rows);

  describe('lookups by key', () => {
    it('finds a creator, channel, video and category by key, and answers null for a key nothing has', async () => {
      const [creator] = await rows(sql<{ user_id: string; username: string }>`SELECT user_id, username FROM creators WHERE platform = 'twitter' ORDER BY user_id LIMIT 1`);
      const [video] = await rows(sql<{ video_id: string; channel_id: string; title: string }>`SELECT video_id, channel_id, title FROM videos ORDER BY video_id LIMIT 1`);
      const [channel] = await rows(sql<{ title: string }>`SELECT title FROM channels WHERE channel_id = ${video.channel_id}`);
      const [category] = await rows(sql<{ id: number; name: string; level: number }>`SELECT id, name, level FROM categories WHERE level = 2 ORDER BY id LIMIT 1`);
      for (const fromIndex of [true, false]) {
        if (!fromIndex) app.services.search = null;
        try {
          const data = await gql(
            `query($u: String!, $c: String!, $v: String!, $k: Int!) {
              creator(userId: $u) { userId username } channel(channelId: $c) { channelId title }
              video(videoId: $v) { videoId title channelId } category(categoryId: $k) { categoryId name level }
              noCreator: creator(userId: "no-such-user") { userId } noChannel: channel(channelId: "nope") { channelId }
              noVideo: video(videoId: "nope") { videoId } noCategory: category(categoryId: 999999) { categoryId }
              zeroCategory: category(categoryId: 0) { categoryId } negativeCategory: category(categoryId: -3) { categoryId }
            }`,
            { u: creator.user_id, c: video.channel_id, v: video.video_id, k: category.id },
          );
          expect(data).toEqual({
            creator: { userId: creator.user_id, username: creator.username },
            channel: { channelId: video.channel_id, title: channel.title },
            video: { videoId: video.video_id, title: video.title, channelId: video.channel_id },
            category: { categoryId: category.id, name: category.name, level: category.level },
            noCreator: null,
            noChannel: null,
            noVideo: null,
            noCategory: null,
            zeroCategory: null,
            negativeCategory: null,
          });
        } finally {
          app.services.search = index;
        }
      }
    });

    it('gives every Node an opaque id that node and nodes resolve again, in the order asked, null where nothing has it', async () => {
      await writeThroughMedias(app.store.db, [
        {
          authorUserId: '4242',
          authorUsername: 'photographer',
          authorNickname: 'A Photographer',
          mediaId: '3141592653589793238',
          mediaCode: 'Cabc',
          createAt: new Date('2026-05-01T12:00:00.000Z'),
          coverUrl: 'https://example.test/c.jpg',
          resources: ['https://example.test/c.jpg'],
          description: 'a post',
          accessibilityCaption: '',
          mediaUrl: 'https://example.test/c.jpg',
          mediaType: 1,
          duration: 0,
          likeCount: 3,
          commentCount: 1,
          playCount: 0,
        },
      ]);
      const data = await gql(`{ creators(first: 2) { nodes { id userId } } videos(first: 2, filter: { categorys: [1, 2] }) { nodes { id videoId category { id categoryId } channel { id channelId } } } }`);
      expect(data.videos.nodes).toHaveLength(2);
      const mediaId = encodeGlobalId({ type: 'Media', platform: 'instagram', mediaId: '3141592653589793238' });
      const missing = encodeGlobalId({ type: 'Video', videoId: 'no-such-video' });
      const expected = [
        ...data.creators.nodes.map((c: { id: string; userId: string }) => ({ id: c.id, __typename: 'Creator', key: c.userId })),
        ...data.videos.nodes.flatMap((v: { id: string; videoId: string; category: { id: string; categoryId: number }; channel: { id: string; channelId: string } }) => [
          { id: v.id, __typename: 'Video', key: v.videoId },
          { id: v.category.id, __typename: 'Category', key: String(v.category.categoryId) },
          { id: v.channel.id, __typename: 'Channel', key: v.channel.channelId },
        ]),
        { id: mediaId, __typename: 'Media', key: '3141592653589793238' },
      ];
      // Opaque: base64url, never the bare key.
      for (const { id, key: bare } of expected) {
        expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(id).not.toBe(bare);
      }
      const ids = [missing, ...expected.map((e) => e.id).reverse(), expected[0].id];
      const query = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id
        ... on Creator { userId } ... on Video { videoId } ... on Channel { channelId } ... on Category { categoryId } ... on Media { mediaId authorUsername likeCount } } }`;
      const { fromIndex, fromSql } = await both(query, { ids });
      expect(fromIndex).toEqual(fromSql);
      const answered = fromIndex.nodes as ({ __typename: string; id: string } & Record<string, unknown>)[];
      expect(answered[0]).toBeNull();
      expect(answered.slice(1).map((node) => node && { id: node.id, __typename: node.__typename })).toEqual(
        [...expected.map(({ id, __typename }) => ({ id, __typename })).reverse(), { id: expected[0].id, __typename: expected[0].__typename }],
      );
      expect(answered.find((node) => node?.__typename === 'Media')).toMatchObject({ mediaId: '3141592653589793238', authorUsername: 'photographer', likeCount: 3 });
      const single = await gql(`query($id: ID!) { node(id: $id) { id ... on Channel { channelId } } }`, { id: expected[2 + 2].id });
      expect(single.node.id).toBe(expected[4].id);
      expect((await gql(`query($id: ID!) { node(id: $id) { id } }`, { id: missing })).node).toBeNull();
    });

    it("reaches the photo platform's posts and authors by id only on a plan that covers realtime fetches", async () => {
      const trial = await app.newKey({ plan: 'trial', ratePerSecond: 100_000 });
      const media = encodeGlobalId({ type: 'Media', platform: 'instagram', mediaId: '3141592653589793238' });
      const author = encodeGlobalId({ type: 'Creator', platform: 'instagram', userId: '1003' });
      const channel = encodeGlobalId({ type: 'Channel', channelId: 'x' });
      const before = (await app.graphql('{ viewer { quotaUsed } }', {}, trial)).body.data.viewer.quotaUsed;
      for (const [query, variables] of [
        ['query($id: ID!) { node(id: $id) { id } }', { id: media }],
        ['query($id: ID!) { node(id: $id) { id } }', { id: author }],
        ['query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [channel, media] }],
      ] as const) {
        const answer = await app.graphql(query, variables, trial);
        expect(answer.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
        expect(answer.body.errors[0].message).toBe('Forbidden: the trial plan does not include realtime.medias');
        expect(answer.body.extensions.cost.charged).toBe(0);
      }
      expect((await app.graphql('{ viewer { quotaUsed } }', {}, trial)).body.data.viewer.quotaUsed).toBe(before);
      // The rest of the graph stays the trial plan's, at 1 unit an id.
      const other = await app.graphql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [channel] }, trial);
      expect(other.body.errors).toBeUndefined();
      expect(other.body.extensions.cost.charged).toBe(1);
      // A pro key reads them as before (the post itself: the test above).
      expect((await gql('query($id: ID!) { node(id: $id) { id } }', { id: author })).node).toBeDefined();
    });

    it('refuses a malformed global id and more than 100 ids with BAD_REQUEST naming the argument', async () => {
      const channelId = encodeGlobalId({ type: 'Channel', channelId: 'x' });
      const malformed = ['', 'not base64!', Buffer.from('Planet:1').toString('base64url'), Buffer.from('Category:abc').toString('base64url'), Buffer.from('Creator:nouser').toString('base64url'), `${channelId}=`];
      for (const id of malformed) {
        expect(decodeGlobalId(id), id).toBeNull();
        const one = await app.graphql(`query($id: ID!) { node(id: $id) { id } }`, { id }, key);
        expect(one.body.errors?.[0]?.extensions, id).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'id' }] });
        const many = await app.graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [channelId, id] }, key);
        expect(many.body.errors?.[0]?.extensions, id).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'ids.1' }] });
      }
      // Every bad item named at once, the empty one among them (it hid the others before).
      const all = await app.graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [channelId, ...malformed] }, key);
      expect(all.body.errors?.[0]?.extensions.fields.map((error: { field: string }) => error.field)).toEqual(malformed.map((_, i) => `ids.${i + 1}`));
      const tooMany = await app.graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: Array.from({ length: 101 }, () => channelId) }, key);
      expect(tooMany.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'ids' }] });
      const hundred = await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: Array.from({ length: 100 }, () => channelId) });
      expect(hundred.nodes).toHaveLength(100);
      const badKey = await app.graphql(`{ creator(userId: "") { userId } }`, {}, key);
      expect(badKey.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'userId' }] });
    });

    it("refuses a global id whose key its type's lookup would refuse, naming the argument, before any charge", async () => {
      const usage = async () => (await gql('{ viewer { quotaUsed } }')).viewer.quotaUsed as number;
      const before = await usage();
      // Each decodes, but names a key no lookup takes: over 256 characters, or on a platform the graph does not serve.
      const badKeys = ['Video:' + 'x'.repeat(300), 'Channel:' + 'x'.repeat(257), 'Creator:nosuch:1', 'Creator:twitter:' + 'x'.repeat(257), 'Media:twitter:1'];
      expect((await app.graphql('query($v: String!) { video(videoId: $v) { videoId } }', { v: 'x'.repeat(300) }, key)).body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
      const channelId = encodeGlobalId({ type: 'Channel', channelId: 'x' });
      for (const text of badKeys) {
        const id = Buffer.from(text).toString('base64url');
        expect(decodeGlobalId(id), text).not.toBeNull();
        const one = await app.graphql(`query($id: ID!) { node(id: $id) { id } }`, { id }, key);
        expect(one.body.errors?.[0]?.extensions, text).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'id' }] });
        const many = await app.graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [channelId, id] }, key);
        expect(many.body.errors?.[0]?.extensions, text).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'ids.1' }] });
        expect(many.body.extensions.cost.charged, text).toBe(0);
      }
      expect(await usage()).toBe(before);
      // At the bound, and on the photo platform, an id is looked up: null when nothing has it.
      const fine = ['Video:' + 'x'.repeat(256), 'Creator:instagram:1', 'Media:instagram:1'].map((text) => Buffer.from(text).toString('base64url'));
      expect(await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: fine })).toEqual({ nodes: [null, null, null] });
    });

    it('reads each type once however many keys the document names (one statement per type, none for cached rows)', async () => {
      const creators = await rows(sql<{ user_id: string }>`SELECT user_id FROM creators WHERE platform = 'twitter' ORDER BY user_id LIMIT 30`);
      const videos = await rows(sql<{ video_id: string; channel_id: string }>`SELECT video_id, channel_id FROM videos ORDER BY video_id DESC LIMIT 30`);
      const ids = [
        ...creators.map((c) => encodeGlobalId({ type: 'Creator', platform: 'twitter', userId: c.user_id })),
        ...videos.map((v) => encodeGlobalId({ type: 'Video', videoId: v.video_id })),
        ...videos.map((v) => encodeGlobalId({ type: 'Channel', channelId: v.channel_id })),
        ...[101, 102, 1001].map((categoryId) => encodeGlobalId({ type: 'Category', categoryId })),
      ];
      const query = `query($ids: [ID!]!, $u: String!, $v: String!) { nodes(ids: $ids) { id } creator(userId: $u) { userId } video(videoId: $v) { videoId } }`;
      const variables = { ids, u: creators[0].user_id, v: videos[0].video_id };
      await gql(query, variables); // the key and a quota lease in place
      for (const fromIndex of [false, true]) {
        if (!fromIndex) app.services.search = null;
        index.rows.forgetAll();
        try {
          const cold = await counted(() => gql(query, variables));
          expect(cold.result.nodes.every((node: unknown) => node !== null)).toBe(true);
          // One statement per type: creators, videos (with their channels), channels, the taxonomy.
          expect(cold.statements, cold.statements.join(' | ')).toHaveLength(4);
          for (const table of ['creators', 'videos', 'channels', 'categories']) {
            expect(cold.statements.filter((s) => new RegExp(`from "${table}"`, 'i').test(s)), table).toHaveLength(1);
          }
          const warm = await counted(() => gql(query, variables));
          expect(warm.result).toEqual(cold.result);
          // With the index the rows come from its row caches; the taxonomy is read per request.
          expect(warm.statements, warm.statements.join(' | ')).toHaveLength(fromIndex ? 1 : 4);
        } finally {
          app.services.search = index;
        }
      }
    });
  });

  describe('relations', () => {
    it('leads from a video to its category, from a creator to its categories, and through the taxonomy both ways', async () => {
      const taxonomy = await rows(sql<{ id: number; parent_id: number | null; level: number; name: string }>`SELECT id, parent_id, level, name FROM categories ORDER BY id`);
      const data = await gql(`{ categories(level: 2) { categoryId name parent { categoryId } children { categoryId level } } }`);
      expect(data.categories).toEqual(
        taxonomy
          .filter((c) => c.level === 2)
          .map((c) => ({
            categoryId: c.id,
            name: c.name,
            parent: { categoryId: c.parent_id },
            children: taxonomy.filter((child) => child.parent_id === c.id).map((child) => ({ categoryId: child.id, level: 3 })),
          })),
      );
      const top = taxonomy.find((c) => c.level === 1)!;
      expect((await gql(`query($p: Int) { categories(parentId: $p) { categoryId } }`, { p: top.id })).categories).toEqual(
        taxonomy.filter((c) => c.parent_id === top.id).map((c) => ({ categoryId: c.id })),
      );
      expect((await gql(`{ categories { categoryId } }`)).categories).toHaveLength(taxonomy.length);
      const bad = await app.graphql(`{ categories(level: 4) { categoryId } }`, {}, key);
      expect(bad.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'level' }] });

      const { fromIndex, fromSql } = await both(`{ creators(first: 30, filter: { categoryIds: [101, 102] }) { nodes { userId categoryIds categories { categoryId name } } }
        videos(first: 30) { nodes { videoId categoryId category { categoryId name } } } }`);
      expect(fromIndex).toEqual(fromSql);
      const name = new Map(taxonomy.map((c) => [c.id, c.name]));
      expect(fromIndex.creators.nodes.length).toBeGreaterThan(0);
      for (const creator of fromIndex.creators.nodes) {
        expect(creator.categories).toEqual(creator.categoryIds.filter((id: number) => name.has(id)).map((id: number) => ({ categoryId: id, name: name.get(id) })));
      }
      for (const video of fromIndex.videos.nodes) {
        expect(video.category).toEqual(name.has(video.categoryId) ? { categoryId: video.categoryId, name: name.get(video.categoryId) } : null);
      }
    });

    it('sees a category changed by an import in the very next request', async () => {
      const query = `{ category(categoryId: 101) { name children { categoryId } } }`;
      const before = await gql(query);
      const line = JSON.stringify({ id: 101, parent_id: 1, name: 'Renamed By Import' });
      await runImport(app.store, 'categories', Readable.from([`${line}\n`]), quiet);
      const after = await gql(query);
      expect(after.category).toEqual({ ...before.category, name: 'Renamed By Import' });
    });

    it('costs a bounded number of statements for a page of videos with each channel and its first videos, whatever the page size', async () => {
      await gql(NESTED, { first: 1 });
      const measured: Record<string, number[]> = {};
      for (const fromIndex of [false, true]) {
        for (const first of [5, 20]) {
          if (!fromIndex) app.services.search = null;
          index.rows.forgetAll();
          try {
            const { result, statements: run } = await counted(() => gql(NESTED, { first }));
            expect(result.videos.nodes).toHaveLength(first);
            (measured[fromIndex ? 'index' : 'sql'] ??= []).push(run.length);
            if (fromIndex) {
              // The page's videos with their channels, then the channels' videos: rows by key, no count, no search.
              expect(run, run.join(' | ')).toHaveLength(2);
              expect(run.join(' ')).not.toMatch(/count\(/i);
            } else {
              // The page, its channels, then every channel's first videos and totals in one statement.
              expect(run, run.join(' | ')).toHaveLength(3);
              expect(run.filter((s) => /row_number\(\) over/i.test(s))).toHaveLength(1);
            }
            // Warm: the index answers and the row caches hold every row (kept on its second miss).
            if (fromIndex) {
              await gql(NESTED, { first });
              expect((await counted(() => gql(NESTED, { first }))).statements).toEqual([]);
            }
          } finally {
            app.services.search = index;
          }
        }
      }
      expect(measured.sql[0]).toBe(measured.sql[1]);
      expect(measured.index[0]).toBe(measured.index[1]);
    });
  });

  describe("a channel's videos", () => {
    type Filter = Record<string, unknown>;
    let channelIds: string[];
    let categoryIds: number[];

    beforeAll(async () => {
      channelIds = (await rows(sql<{ channel_id: string }>`SELECT channel_id FROM channels ORDER BY channel_id`)).map((r) => r.channel_id);
      categoryIds = (await rows(sql<{ category_id: number }>`SELECT DISTINCT category_id FROM videos ORDER BY 1`)).map((r) => r.category_id);
    });

    function randomFilter(rng: SeededRandom): Filter {
      const filter: Filter = {};
      if (rng.chance(0.3)) filter.query = rng.pick(['a', 'e', 'review', 'how', 'the', 'top']);
      if (rng.chance(0.3)) filter.categorys = Array.from({ length: rng.int(1, 3) }, () => rng.pick(categoryIds));
      if (rng.chance(0.3)) filter.videoType = rng.pick(['VIDEO', 'SHORT']);
      if (rng.chance(0.3)) filter.createAtStart = `2026-0${rng.int(1, 6)}-01`;
      if (rng.chance(0.3)) filter.createAtEnd = `2026-${String(rng.int(6, 12)).padStart(2, '0')}-01`;
      return filter;
    }

    /** A channel's videos by plain SQL, newest first: the ids and the total. */
    async function plainSql(channelId: string, filter: Filter, first: number) {
      const conditions = [sql`channel_id = ${channelId}`];
      if (filter.query) conditions.push(sql`(lower(title) LIKE ${`%${filter.query}%`} OR lower(description) LIKE ${`%${filter.query}%`})`);
      if (filter.categorys) conditions.push(sql`category_id = ANY(${filter.categorys}::int[])`);
      if (filter.videoType) conditions.push(sql`video_type = ${filter.videoType === 'SHORT' ? 2 : 1}`);
      if (filter.createAtStart) conditions.push(sql`create_at >= ${filter.createAtStart}::date`);
      if (filter.createAtEnd) conditions.push(sql`create_at < ${filter.createAtEnd}::date + 1`);
      const where = sql.join(conditions, sql` AND `);
      const ids = await rows(sql<{ video_id: string }>`SELECT video_id FROM videos WHERE ${where} ORDER BY create_at DESC, video_id DESC LIMIT ${first}`);
      const [{ total }] = await rows(sql<{ total: string | number }>`SELECT count(*) AS total FROM videos WHERE ${where}`);
      return { ids: ids.map((r) => r.video_id), total: Number(total) };
    }

    const CHANNEL_VIDEOS = `query($ids: [ID!]!, $filter: ChannelVideoFilter, $sortBy: VideoSort, $first: Int, $last: Int, $after: String, $before: String, $offset: Int) {
      nodes(ids: $ids) { ... on Channel { channelId videos(filter: $filter, sortBy: $sortBy, first: $first, last: $last, after: $after, before: $before, offset: $offset) {
        totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { videoId channelId } } } } } }`;

    async function randomRounds(rng: SeededRandom, runs: number, label: string) {
      let nonEmpty = 0;
      for (let run = 0; run < runs; run++) {
        const channels = Array.from({ length: rng.int(1, 8) }, () => rng.pick(channelIds));
        const ids = channels.map((channelId) => encodeGlobalId({ type: 'Channel', channelId }));
        const filter = randomFilter(rng);
        const first = rng.int(1, 12);
        const newest = rng.chance(0.6);
        const variables = { ids, filter, first, ...(newest ? { sortBy: 'NEWEST' } : {}), ...(rng.chance(0.2) ? { offset: rng.int(1, 5) } : {}) };
        const context = `${label} #${run} ${JSON.stringify(variables)}`;
        const { fromIndex, fromSql } = await both(CHANNEL_VIDEOS, variables);
        expect(fromIndex, context).toEqual(fromSql);
        for (const [i, channel] of (fromIndex.nodes as { channelId: string; videos: { totalCount: number; edges: { node: { videoId: string; channelId: string } }[] } }[]).entries()) {
          expect(channel.channelId, context).toBe(channels[i]);
          for (const edge of channel.videos.edges) expect(edge.node.channelId, context).toBe(channels[i]);
          if (channel.videos.totalCount > 0) nonEmpty++;
          if (newest && !('offset' in variables)) {
            expect({ ids: channel.videos.edges.map((e) => e.node.videoId), total: channel.videos.totalCount }, context).toEqual(
              await plainSql(channels[i], filter, first),
            );
          }
        }
        // Walk on from the last cursor of the first channel, and back from its first.
        const [head] = fromIndex.nodes as { videos: { pageInfo: { startCursor: string | null; endCursor: string | null } } }[];
        if (head.videos.pageInfo.endCursor && !('offset' in variables)) {
          const base = { ids, filter, ...(newest ? { sortBy: 'NEWEST' } : {}) };
          for (const page of [{ first, after: head.videos.pageInfo.endCursor }, { last: first, before: head.videos.pageInfo.startCursor }]) {
            const walked = await both(CHANNEL_VIDEOS, { ...base, ...page });
            expect(walked.fromIndex, `${context} ${JSON.stringify(page)}`).toEqual(walked.fromSql);
          }
        }
      }
      return nonEmpty;
    }

    it('answers random filters, orders and pages exactly as plain SQL does, from the index and from SQL', { timeout: 300_000 }, async () => {
      const nonEmpty = await randomRounds(seededRandom(`channel-videos-${thread}`), 60, 'loaded');
      expect(nonEmpty).toBeGreaterThan(40);
    });

    it('stays exact after random writes that reach the index through the change feed', { timeout: 300_000 }, async () => {
      const rng = seededRandom(`channel-video-writes-${thread}`);
      for (let round = 0; round < 3; round++) {
        const videoIds = (await rows(sql<{ video_id: string }>`SELECT video_id FROM videos ORDER BY video_id`)).map((r) => r.video_id);
        const moved = Array.from({ length: 15 }, () => rng.pick(videoIds));
        const target = rng.pick(channelIds);
        await sql`UPDATE videos SET channel_id = ${target}, category_id = ${rng.pick(categoryIds)} WHERE video_id = ANY(${moved})`.execute(app.store.db);
        const redated = Array.from({ length: 10 }, () => rng.pick(videoIds));
        await sql`UPDATE videos SET create_at = create_at - interval '40 days', title = title || ' a' WHERE video_id = ANY(${redated})`.execute(app.store.db);
        const gone = Array.from({ length: 10 }, () => rng.pick(videoIds)).filter((id) => !moved.includes(id));
        await sql`DELETE FROM videos WHERE video_id = ANY(${gone})`.execute(app.store.db);
        await sql`INSERT INTO videos (video_id, channel_id, title, create_at, video_type, category_id, like_count, comment_count, play_count, engagement_rate)
          SELECT 'graph-new-' || ${round} || '-' || g, ${target}, 'brand new review ' || g, now() - g * interval '1 day', 1 + g % 2, ${rng.pick(categoryIds)}, g, g, g * 10, 0
          FROM generate_series(1, 8) g`.execute(app.store.db);
        await index.refresh();
        await randomRounds(rng, 15, `after writes ${round}`);
        const mine = await both(CHANNEL_VIDEOS, { ids: [encodeGlobalId({ type: 'Channel', channelId: target })], first: 30, sortBy: 'NEWEST' });
        expect(mine.fromIndex).toEqual(mine.fromSql);
        expect(mine.fromIndex.nodes[0].videos.edges.map((e: { node: { videoId: string } }) => e.node.videoId)).toEqual((await plainSql(target, {}, 30)).ids);
        // A looked-up row is the index's current one: the renamed videos show their new titles.
        const looked = await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { ... on Video { videoId title } } }`, {
          ids: redated.map((videoId) => encodeGlobalId({ type: 'Video', videoId })),
        });
        const titles = await rows(sql<{ video_id: string; title: string }>`SELECT video_id, title FROM videos WHERE video_id = ANY(${redated})`);
        const title = new Map(titles.map((r) => [r.video_id, r.title]));
        expect(looked.nodes).toEqual(redated.map((videoId) => (title.has(videoId) ? { videoId, title: title.get(videoId) } : null)));
      }
    });

    it('answers each place of a document with its own arguments, under every channel of a page', async () => {
      // The places share their field and differ in arguments: each is prepared once for the whole
      // page (Context.perField), and none may answer with another's.
      const answer = await gql(`{ videos(first: 8) { nodes { channel { channelId
        newest: videos(first: 1) { totalCount nodes { videoId } }
        shorts: videos(first: 2, filter: { videoType: SHORT }) { totalCount nodes { videoId } }
        more: videos(first: 3) { nodes { videoId } } } } } }`);
      const channels = (answer.videos.nodes as { channel: Record<string, any> }[]).map((node) => node.channel);
      expect(channels.length).toBe(8);
      for (const channel of channels) {
        const newest = await plainSql(channel.channelId, {}, 3);
        const shorts = await plainSql(channel.channelId, { videoType: 'SHORT' }, 2);
        expect(channel.newest).toEqual({ totalCount: newest.total, nodes: newest.ids.slice(0, 1).map((videoId) => ({ videoId })) });
        expect(channel.shorts).toEqual({ totalCount: shorts.total, nodes: shorts.ids.map((videoId) => ({ videoId })) });
        expect(channel.more).toEqual({ nodes: newest.ids.map((videoId) => ({ videoId })) });
      }
    });

    it('refuses channel conditions in a channel filter, and a foreign cursor, with BAD_REQUEST', async () => {
      const id = encodeGlobalId({ type: 'Channel', channelId: channelIds[0] });
      const channelCondition = await app.graphql(`query($id: ID!) { node(id: $id) { ... on Channel { videos(filter: { locations: ["US"] }) { totalCount } } } }`, { id }, key);
      expect(channelCondition.body.errors?.[0]?.message).toMatch(/locations/);
      const cursor = await app.graphql(`query($id: ID!) { node(id: $id) { ... on Channel { videos(after: "bm9wZQ") { totalCount } } } }`, { id }, key);
      expect(cursor.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'after' }] });
    });
  });
});
