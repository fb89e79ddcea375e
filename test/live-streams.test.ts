import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../src/domain/cursors.js';
import type { CollectedStream } from '../src/domain/records.js';
import { countLiveStreams, replaceSnapshot } from '../src/store/live-streams.js';
import { createTestApp, type TestApp } from './support/app.js';

const PATH = '/api/v1/twitch/search/live';
let app: TestApp;
let key: string;

// A known snapshot with deliberate ties: viewer counts repeat in fours, ids differ in length and
// case so that only a bytewise id order is right ('9…' > '10…', 'Z' < 'a').
const games = ['509658', '21779', '32982'];
const languages = ['en', 'de', 'ja', 'other'];
const streams: CollectedStream[] = Array.from({ length: 57 }, (_, i) => ({
  id: i % 9 === 0 ? `9${i}` : i % 9 === 1 ? `1${String(i).padStart(4, '0')}` : i % 9 === 2 ? `Z${i}` : `a${i}`,
  userId: String(5000 + i),
  userLogin: i === 5 ? 'NightOwl' : `streamer_${i}`,
  userName: `Streamer ${i}`,
  gameId: games[i % 3],
  gameName: `Game ${games[i % 3]}`,
  type: i % 10 === 3 ? '' : 'live',
  title: `stream ${i}`,
  viewerCount: i === 11 ? 15_000_000_000 : 100 * Math.floor(i / 4),
  startedAt: new Date(Date.UTC(2026, 4, 1, i % 24, i % 60, 7)),
  language: languages[i % 4],
  thumbnailUrl: `https://cdn.example/live_${i}-{width}x{height}.jpg`,
  tags: i % 3 === 0 ? [] : ['English', `tag${i}`],
  isMature: i % 4 === 1,
}));

type Stream = (typeof streams)[number];
const byViewers = (a: Stream, b: Stream) => b.viewerCount - a.viewerCount || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
const expected = (predicate: (s: Stream) => boolean = () => true) => streams.filter(predicate).sort(byViewers).map((s) => s.id);
const idsOf = (items: { id: string }[]) => items.map((s) => s.id);

beforeAll(async () => {
  app = await createTestApp();
  await replaceSnapshot(app.store.db, streams);
  // A generous rate so full cursor walks are not throttled.
  key = await app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
});
afterAll(() => app?.close());

async function search(body: Record<string, unknown>, useKey = key) {
  const response = await app.rest(PATH, { body, key: useKey });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { more: boolean; offset: string; data: any[] };
}

describe('live-stream search over REST', () => {
  it('answers { more, offset, data } with every contract field plus last_update_at', async () => {
    const response = await app.rest(PATH, { body: {}, key });
    expect(response.body).toMatchObject({ success: true, code: 200, message: 'success' });
    const data = response.body.data;
    expect(Object.keys(data).sort()).toEqual(['data', 'more', 'offset']);
    // Default page size 20.
    expect(idsOf(data.data)).toEqual(expected().slice(0, 20));
    expect(data.more).toBe(true);
    expect(typeof data.offset).toBe('string');
    expect(Object.keys(data.data[0]).sort()).toEqual(
      [
        'id', 'user_id', 'user_login', 'user_name', 'game_id', 'game_name', 'type', 'title', 'viewer_count',
        'started_at', 'language', 'thumbnail_url', 'tags', 'is_mature', 'last_update_at',
      ].sort(),
    );
  });

  it('returns each stream field for field, the 15,000,000,000 viewer count exact and type "" as stored', async () => {
    const all = (await search({ first: 100 })).data;
    expect(all[0].id).toBe('Z11');
    expect(all[0].viewer_count).toBe(15_000_000_000);
    for (const item of all) {
      const s = streams.find((x) => x.id === item.id)!;
      expect(item).toEqual({
        id: s.id,
        user_id: s.userId,
        user_login: s.userLogin,
        user_name: s.userName,
        game_id: s.gameId,
        game_name: s.gameName,
        type: s.type,
        title: s.title,
        viewer_count: s.viewerCount,
        started_at: s.startedAt.toISOString(),
        language: s.language,
        thumbnail_url: s.thumbnailUrl,
        tags: s.tags,
        is_mature: s.isMature,
        last_update_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
    }
    expect(all.some((item: { type: string }) => item.type === '')).toBe(true);
  });

  const filters: [string, Record<string, unknown>, (s: Stream) => boolean][] = [
    ['user_id', { user_id: '5007' }, (s) => s.userId === '5007'],
    ['user_login, case-insensitively', { user_login: 'nIGHTowl' }, (s) => s.userLogin === 'NightOwl'],
    ['user_login matches whole logins only', { user_login: 'streamer_1' }, (s) => s.userLogin === 'streamer_1'],
    ['game_id', { game_id: '21779' }, (s) => s.gameId === '21779'],
    ['type live (streams with type "" left out)', { type: 'live' }, (s) => s.type === 'live'],
    ['type all', { type: 'all' }, () => true],
    ['language, case-insensitively', { language: 'DE' }, (s) => s.language === 'de'],
    ['language other', { language: 'other' }, (s) => s.language === 'other'],
    ['several filters at once', { game_id: '509658', type: 'live', language: 'en' }, (s) => s.gameId === '509658' && s.type === 'live' && s.language === 'en'],
    ['an empty string, which does not filter', { user_login: '' }, () => true],
  ];

  it.each(filters)('filters by %s, in viewer order', async (_name, body, predicate) => {
    const want = expected(predicate);
    expect(want.length).toBeGreaterThan(0);
    const page = await search({ ...body, first: 100 });
    expect(idsOf(page.data)).toEqual(want);
    expect(page.more).toBe(false);
    expect(page.offset).toBe('');
  });

  it('walks the whole snapshot with after = offset, ties split across pages neither repeated nor skipped', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await search({ first: 7, ...(after ? { after } : {}) });
      pages += 1;
      seen.push(...idsOf(page.data));
      if (!page.more) {
        expect(page.offset).toBe('');
        break;
      }
      expect(page.data).toHaveLength(7);
      after = page.offset;
    }
    expect(pages).toBe(Math.ceil(streams.length / 7));
    // The last page's empty offset sent back is no first page (docs/decisions.md): a 400 naming the field.
    for (const field of ['after', 'before']) {
      const again = await app.rest(PATH, { body: { first: 7, [field]: '' } });
      expect(again.status).toBe(400);
      expect(again.body.errors).toEqual([{ field, message: 'is not a cursor issued for this order' }]);
    }
    expect(seen).toEqual(expected());
  });

  it('walks the whole snapshot backwards with before = offset, each page in the same order', async () => {
    const want = expected();
    const cursors = await graphqlCursors();
    // Start just after the last stream: its own cursor, and the stream itself, added at the end.
    const pages: string[][] = [];
    let before = cursors.at(-1)!;
    for (;;) {
      const page = await search({ first: 7, before });
      pages.unshift(idsOf(page.data));
      if (!page.more) {
        expect(page.offset).toBe('');
        break;
      }
      before = page.offset;
    }
    expect(pages.flat().concat(want.at(-1)!)).toEqual(want);
    // Every page but the first (the one nearest the top) is full.
    expect(pages.slice(1).every((p) => p.length === 7)).toBe(true);
  });

  it('before returns exactly the `first` streams just before the cursor', async () => {
    const want = expected();
    const cursors = await graphqlCursors();
    const page = await search({ first: 5, before: cursors[20] });
    expect(idsOf(page.data)).toEqual(want.slice(15, 20));
    expect(page.more).toBe(true);
    const near = await search({ first: 5, before: cursors[3] });
    expect(idsOf(near.data)).toEqual(want.slice(0, 3));
    expect(near).toMatchObject({ more: false, offset: '' });
    const top = await search({ first: 5, before: cursors[0] });
    expect(top).toEqual({ more: false, offset: '', data: [] });
  });

  it('filters and cursors combine: a filtered walk forwards', async () => {
    const want = expected((s) => s.type === 'live' && s.gameId !== '32982');
    const seen: string[] = [];
    for (const gameId of ['509658', '21779']) {
      let after: string | undefined;
      for (;;) {
        const page = await search({ type: 'live', game_id: gameId, first: 4, ...(after ? { after } : {}) });
        seen.push(...idsOf(page.data));
        if (!page.more) break;
        after = page.offset;
      }
    }
    expect(seen.sort()).toEqual([...want].sort());
  });

  const bad: [string, unknown, string][] = [
    ['after and before at once', { after: 'x', before: 'y' }, 'before'],
    ['first 0', { first: 0 }, 'first'],
    ['first 101', { first: 101 }, 'first'],
    ['a fractional first', { first: 2.5 }, 'first'],
    ['first as a string', { first: '20' }, 'first'],
    ['an unknown field', { page_size: 20 }, 'page_size'],
    ['a camelCase name', { userLogin: 'x' }, 'userLogin'],
    ['an unknown type', { type: 'offline' }, 'type'],
    ['type in upper case', { type: 'LIVE' }, 'type'],
    ['a three-letter language', { language: 'eng' }, 'language'],
    ['user_id as a number', { user_id: 5007 }, 'user_id'],
    ['a cursor that is not one', { after: 'not-a-cursor' }, 'after'],
    ['a cursor of another search', { after: encodeCursor('c:followers', [1000, 'u001']) }, 'after'],
    ['a cursor of the right shape with a non-numeric count', { before: encodeCursor('ls:viewers', ['lots', 'a1']) }, 'before'],
    ['a cursor with a non-string id', { after: encodeCursor('ls:viewers', [100, 7]) }, 'after'],
  ];

  it.each(bad)('rejects %s with 400 naming the field, without charging', async (_name, body, field) => {
    const before = await remaining(key);
    const response = await app.rest(PATH, { body, key });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 400, message: 'Bad Request' });
    expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(Number(response.headers.get('x-quota-remaining'))).toBe(before);
  });

  it('costs 1 unit per successful call, seen in x-quota-remaining', async () => {
    const metered = await app.newKey({ plan: 'trial', quota: 50 });
    const first = await app.rest(PATH, { body: { first: 3 }, key: metered });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-quota-remaining')).toBe('49');
    const second = await app.rest(PATH, { body: { first: 3, after: first.body.data.offset }, key: metered });
    expect(second.headers.get('x-quota-remaining')).toBe('48');
    const gql = await app.graphql('{ liveStreams(first: 1) { nodes { id } } }', undefined, metered);
    expect(gql.body.errors).toBeUndefined();
    expect(gql.headers.get('x-quota-remaining')).toBe('47');
  });

  it('answers 403 once the quota is used up, and 404 for a GET', async () => {
    const oneCall = await app.newKey({ plan: 'trial', quota: 1 });
    expect((await app.rest(PATH, { body: {}, key: oneCall })).status).toBe(200);
    const spent = await app.rest(PATH, { body: {}, key: oneCall });
    expect(spent.status).toBe(403);
    expect(spent.headers.get('x-quota-remaining')).toBe('0');
    expect((await app.rest(PATH, { method: 'GET', key })).status).toBe(404);
  });
});

async function remaining(useKey: string): Promise<number> {
  const ping = await app.rest('/api/ping', { key: useKey });
  return Number(ping.headers.get('x-quota-remaining'));
}

const gqlQuery = `query($filter: LiveStreamFilter, $first: Int, $after: String, $last: Int, $before: String) {
  liveStreams(filter: $filter, first: $first, after: $after, last: $last, before: $before) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id } }
    nodes {
      id userId userLogin userName gameId gameName type title viewerCount startedAt language
      thumbnailUrl tags isMature lastUpdateAt
    }
  }
}`;

async function graphqlCursors(): Promise<string[]> {
  const { body } = await app.graphql(gqlQuery, { first: 100 }, key);
  expect(body.errors).toBeUndefined();
  return body.data.liveStreams.edges.map((e: { cursor: string }) => e.cursor);
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

describe('liveStreams over GraphQL', () => {
  it('agrees with REST item for item, with an exact totalCount', async () => {
    const filter = { type: 'LIVE', language: 'en' };
    const gql = await app.graphql(gqlQuery, { filter, first: 100 }, key);
    expect(gql.body.errors).toBeUndefined();
    const rest = await search({ type: 'live', language: 'en', first: 100 });
    const connection = gql.body.data.liveStreams;
    expect(connection.totalCount).toBe(expected((s) => s.type === 'live' && s.language === 'en').length);
    const asRest = connection.nodes.map((node: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(node).map(([k, v]) => [snake(k), v])),
    );
    expect(asRest).toEqual(rest.data);
  });

  it('REST offsets and GraphQL cursors are the same cursors', async () => {
    const rest = await search({ first: 6 });
    const gql = await app.graphql(gqlQuery, { first: 6, after: rest.offset }, key);
    expect(idsOf(gql.body.data.liveStreams.nodes)).toEqual(expected().slice(6, 12));
  });

  it('rejects both cursors, first 101 and a forged cursor with BAD_REQUEST', async () => {
    const both = await app.graphql(gqlQuery, { first: 5, after: 'a', before: 'b' }, key);
    expect(both.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    const tooMany = await app.graphql(gqlQuery, { first: 101 }, key);
    expect(tooMany.body.errors[0].extensions.fields[0].field).toBe('first');
    const forged = await app.graphql(gqlQuery, { first: 5, after: encodeCursor('ls:viewers', [{} as never, 'x']) }, key);
    expect(forged.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(forged.body.errors[0].extensions.fields[0].field).toBe('after');
  });
});

describe('snapshot replacement', () => {
  it('readers during many replacements always see one complete snapshot, never a mix or an empty table', async () => {
    const snapshotA = streams.slice(0, 30);
    const snapshotB = streams.slice(10, 55).map((s) => ({ ...s, viewerCount: s.viewerCount + 1 }));
    const sizes = new Set([snapshotA.length, snapshotB.length]);
    const db = app.store.db;
    await replaceSnapshot(db, snapshotA);

    let writing = true;
    const observed: number[] = [];
    const reader = async () => {
      while (writing) {
        observed.push(await countLiveStreams(db, {}));
        const page = await search({ first: 100 });
        observed.push(page.data.length);
        // Within one page, every stream comes from the same snapshot.
        const fromB = page.data.map((s: { id: string; viewer_count: number }) => s.viewer_count % 100 === 1);
        expect(new Set(fromB).size).toBe(1);
      }
    };
    const writer = async () => {
      for (let i = 0; i < 30; i++) await replaceSnapshot(db, i % 2 === 0 ? snapshotB : snapshotA);
      writing = false;
    };
    await Promise.all([writer(), reader(), reader(), reader()]);
    expect(observed.length).toBeGreaterThan(10);
    for (const count of observed) expect(sizes.has(count), `saw ${count} streams`).toBe(true);
    // Put the known snapshot back for any test that runs after this one.
    await replaceSnapshot(db, streams);
  });
});
