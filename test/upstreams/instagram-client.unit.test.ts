import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInstagramClient, type InstagramClient, type MediaItem } from '../../src/upstreams/instagram/client.js';
import {
  INSTAGRAM_SIM_PAGE_SIZE,
  INSTAGRAM_SIM_USERS,
  startInstagramSimulator,
  type InstagramSimulator,
  type SimFeedItem,
  type SimFeedPage,
  type SimVersion,
} from '../../src/upstreams/instagram/simulator.js';
import { startScriptedUpstream } from './helpers/scripted-upstream.js';

let sim: InstagramSimulator;
let client: InstagramClient;

beforeAll(async () => {
  sim = await startInstagramSimulator();
  client = createInstagramClient({ baseUrl: sim.url });
});
afterAll(() => sim.close());

const feedPath = (userId: string): string => `/api/v1/feed/user/${userId}/`;

/** The simulator's own answer, read over HTTP like the client does. */
async function rawPage(userId: string, maxId = ''): Promise<SimFeedPage> {
  const query = maxId === '' ? '' : `?max_id=${encodeURIComponent(maxId)}`;
  const response = await fetch(`${sim.url}${feedPath(userId)}${query}`);
  return (await response.json()) as SimFeedPage;
}

const withWidth = (versions: SimVersion[] | undefined, width: number): string => {
  const version = versions?.find((v) => v.width === width);
  if (!version) throw new Error(`no version ${width} wide`);
  return version.url;
};
// The simulator's largest sizes: 1080-wide images, 720-wide videos; neither is served first.
const largestImage = (media: Pick<SimFeedItem, 'image_versions2'>): string => withWidth(media.image_versions2?.candidates, 1080);
const largestVideo = (media: Pick<SimFeedItem, 'video_versions'>): string => withWidth(media.video_versions, 720);

function mediaById(medias: readonly MediaItem[], pk: string): MediaItem {
  const media = medias.find((m) => m.mediaId === pk);
  if (!media) throw new Error(`media ${pk} missing`);
  return media;
}

describe('instagram client: mapping (decisions §3)', () => {
  let raw: SimFeedPage;
  let medias: readonly MediaItem[];
  beforeAll(async () => {
    raw = await rawPage(INSTAGRAM_SIM_USERS.standard);
    ({ medias } = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard));
  });

  it('maps an image post field by field, its main URL being the largest candidate, not the first', () => {
    const post = raw.items.find((i) => i.media_type === 1 && i.caption && i.accessibility_caption)!;
    const candidates = post.image_versions2!.candidates;
    expect(candidates[0].url).not.toBe(largestImage(post));
    expect(mediaById(medias, post.pk)).toEqual({
      authorUserId: INSTAGRAM_SIM_USERS.standard,
      authorUsername: post.user.username,
      authorNickname: post.user.full_name,
      mediaId: post.pk,
      mediaCode: post.code,
      createAt: new Date(post.taken_at * 1000),
      coverUrl: candidates[0].url,
      resources: [largestImage(post)],
      description: post.caption!.text,
      accessibilityCaption: post.accessibility_caption!,
      mediaUrl: largestImage(post),
      mediaType: 1,
      duration: 0,
      likeCount: post.like_count,
      commentCount: post.comment_count,
      playCount: 0,
    } satisfies MediaItem);
  });

  it('maps a video post field by field: largest video version, first image as cover, duration rounded', () => {
    const post = raw.items.find((i) => i.media_type === 2 && i.caption && i.accessibility_caption)!;
    expect(post.video_versions![0].url).not.toBe(largestVideo(post));
    expect(Number.isInteger(post.video_duration)).toBe(false);
    expect(mediaById(medias, post.pk)).toEqual({
      authorUserId: INSTAGRAM_SIM_USERS.standard,
      authorUsername: post.user.username,
      authorNickname: post.user.full_name,
      mediaId: post.pk,
      mediaCode: post.code,
      createAt: new Date(post.taken_at * 1000),
      coverUrl: post.image_versions2!.candidates[0].url,
      resources: [largestVideo(post)],
      description: post.caption!.text,
      accessibilityCaption: post.accessibility_caption!,
      mediaUrl: largestVideo(post),
      mediaType: 2,
      duration: Math.round(post.video_duration!),
      likeCount: post.like_count,
      commentCount: post.comment_count,
      playCount: post.play_count!,
    } satisfies MediaItem);
  });

  it.each([
    ['an image', 1],
    ['a video', 2],
  ] as const)('maps a carousel led by %s: every child in resources, cover and media URL from the first child', (_, leadType) => {
    const post = raw.items.find((i) => i.media_type === 8 && i.carousel_media![0].media_type === leadType)!;
    const children = post.carousel_media!;
    const expectedResources = children.map((child) => (child.media_type === 2 ? largestVideo(child) : largestImage(child)));
    expect(children.length).toBeGreaterThan(1);
    expect(mediaById(medias, post.pk)).toEqual({
      authorUserId: INSTAGRAM_SIM_USERS.standard,
      authorUsername: post.user.username,
      authorNickname: post.user.full_name,
      mediaId: post.pk,
      mediaCode: post.code,
      createAt: new Date(post.taken_at * 1000),
      coverUrl: children[0].image_versions2.candidates[0].url,
      resources: expectedResources,
      description: post.caption?.text ?? '',
      accessibilityCaption: post.accessibility_caption ?? '',
      mediaUrl: expectedResources[0],
      mediaType: 8,
      duration: leadType === 2 ? Math.round(children[0].video_duration!) : 0,
      likeCount: post.like_count,
      commentCount: post.comment_count,
      playCount: 0,
    } satisfies MediaItem);
  });

  it('turns a null caption and a null accessibility caption into empty strings', () => {
    const noCaption = raw.items.find((i) => i.caption === null)!;
    const noAltText = raw.items.find((i) => i.accessibility_caption === null)!;
    expect(mediaById(medias, noCaption.pk).description).toBe('');
    expect(mediaById(medias, noAltText.pk).accessibilityCaption).toBe('');
  });

  it('keeps 19-digit pks exact and returns a full page newest first with all three kinds', () => {
    expect(medias.map((m) => m.mediaId)).toEqual(raw.items.map((i) => i.pk));
    expect(BigInt(medias[0].mediaId) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(medias).toHaveLength(INSTAGRAM_SIM_PAGE_SIZE);
    expect(new Set(medias.map((m) => m.mediaType))).toEqual(new Set([1, 2, 8]));
    const times = medias.map((m) => m.createAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('keeps a play count above 2^31 exact', () => {
    const post = raw.items.find((i) => (i.play_count ?? 0) > 2 ** 31)!;
    expect(mediaById(medias, post.pk).playCount).toBe(post.play_count);
  });

  it('reports the account from its own posts, and null for an account without posts', async () => {
    const page = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard);
    const user = raw.items[0].user;
    expect(page.author).toEqual({ userId: user.pk, username: user.username, nickname: user.full_name });

    expect(await client.fetchUserMedias(INSTAGRAM_SIM_USERS.noPosts)).toEqual({ more: false, offset: '', medias: [], author: null });
  });

  it('puts a pinned older post in its place, so a page is newest first', async () => {
    const pinnedRaw = await rawPage(INSTAGRAM_SIM_USERS.pinnedPost);
    const { medias: pinnedMedias } = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.pinnedPost);
    expect(pinnedRaw.items[0].taken_at).toBeLessThan(pinnedRaw.items[1].taken_at);
    expect(pinnedMedias.at(-1)!.mediaId).toBe(pinnedRaw.items[0].pk);
    const times = pinnedMedias.map((m) => m.createAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });
});

describe('instagram client: paging', () => {
  it('pages to the last feed page: 3 pages, no post twice, offset "" at the end', async () => {
    const firstCursor = (await rawPage(INSTAGRAM_SIM_USERS.standard)).next_max_id;
    sim.resetRequestCounts();
    const first = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard);
    const second = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard, first.offset);
    const third = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard, second.offset);

    expect([first.more, second.more, third.more]).toEqual([true, true, false]);
    expect(first.offset).toBe(firstCursor);
    expect(third.offset).toBe('');
    const ids = [first, second, third].flatMap((page) => page.medias.map((m) => m.mediaId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(third.medias.length).toBeGreaterThan(0);
    expect(third.medias.length).toBeLessThanOrEqual(INSTAGRAM_SIM_PAGE_SIZE);
    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.standard))).toBe(3);
  });

  it('stops when the upstream hands back the cursor it was sent', async () => {
    const last = await lastRawPageWithCursor(INSTAGRAM_SIM_USERS.repeatedCursor);
    expect(last.page).toMatchObject({ more_available: true, next_max_id: last.sentCursor });

    const page = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.repeatedCursor, last.sentCursor);
    expect(page.more).toBe(false);
    expect(page.offset).toBe('');
    expect(page.medias.length).toBe(last.page.items.length);
  });

  it('stops when the upstream says more_available with an empty cursor', async () => {
    const last = await lastRawPageWithCursor(INSTAGRAM_SIM_USERS.emptyCursor);
    expect(last.page).toMatchObject({ more_available: true, next_max_id: '' });

    const page = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.emptyCursor, last.sentCursor);
    expect(page).toMatchObject({ more: false, offset: '' });
  });

  it('keeps a pk and a cursor sent as JSON numbers beyond 2^53 exact', async () => {
    const item = (await rawPage(INSTAGRAM_SIM_USERS.standard)).items.find((i) => i.media_type === 1)!;
    const body = JSON.stringify({ items: [item], more_available: true, next_max_id: 'CURSOR' })
      .replace(`"pk":"${item.pk}"`, `"pk":${item.pk}`)
      .replace('"CURSOR"', '3400463780000001900');
    const upstream = await startScriptedUpstream([{ body }]);
    try {
      const page = await createInstagramClient({ baseUrl: upstream.url }).fetchUserMedias(INSTAGRAM_SIM_USERS.standard);
      expect(page.medias[0].mediaId).toBe(item.pk);
      expect(page.offset).toBe('3400463780000001900');
    } finally {
      await upstream.close();
    }
  });
});

/** Walks the raw feed to its last page, returning it with the cursor that asked for it. */
async function lastRawPageWithCursor(userId: string): Promise<{ page: SimFeedPage; sentCursor: string }> {
  let sentCursor = '';
  let page = await rawPage(userId);
  for (let pages = 0; pages < 10 && page.next_max_id && page.next_max_id !== sentCursor; pages++) {
    sentCursor = page.next_max_id;
    page = await rawPage(userId, sentCursor);
  }
  return { page, sentCursor };
}
