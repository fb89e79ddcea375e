import type { ServerResponse } from 'node:http';
import { seededRandom, type SeededRandom } from '../seeded-random.js';
import {
  sendJson,
  startSimulatorServer,
  waitUnlessClosed,
  type SimulatorListenOptions,
  type SimulatorServer,
} from '../simulator-server.js';

/**
 * A deterministic stand-in for the photo platform's feed API:
 * `GET /api/v1/feed/user/{user_id}/[?max_id=…]`. Every all-digit user id has a feed generated from
 * the id alone (2 to 4 pages, newest first, images, videos and carousels mixed); the ids below
 * drive the edge cases.
 */
export const INSTAGRAM_SIM_USERS = {
  /** 3 pages (12 + 12 + a partial page) mixing all three media kinds. */
  standard: '1003',
  noPosts: '1001',
  /** Its last page answers more_available with the very max_id it was asked for. */
  repeatedCursor: '1004',
  /** Its last page answers more_available with an empty next_max_id. */
  emptyCursor: '1005',
  /** Page 1 starts with an older, pinned post, as the platform serves pinned posts. */
  pinnedPost: '1006',
  notFound: '4040',
  /** 500; so do 5001 to 5009, for tests that need several failing accounts. */
  serverError: '5000',
  /** 200 with JSON of the wrong shape. */
  malformed: '4220',
  /** 200 with a body that is not JSON. */
  notJson: '4221',
  /** Accepts the connection and never answers. */
  hangs: '4080',
} as const;

/** ok: normal answers; fail: 500 for everyone; slow: answers after a delay; malformed: 200 with truncated JSON. */
export type InstagramSimulatorMode = 'ok' | 'fail' | 'slow' | 'malformed';

export interface InstagramSimulator extends SimulatorServer {
  setMode(mode: InstagramSimulatorMode, options?: { delayMs?: number }): void;
}

export const INSTAGRAM_SIM_PAGE_SIZE = 12;
const DEFAULT_SLOW_DELAY_MS = 2_000;
const FEED_PATH = /^\/api\/v1\/feed\/user\/([^/]+)\/?$/;

export async function startInstagramSimulator(options: SimulatorListenOptions = {}): Promise<InstagramSimulator> {
  let mode: InstagramSimulatorMode = 'ok';
  let slowDelayMs = DEFAULT_SLOW_DELAY_MS;

  const server = await startSimulatorServer(async (request, response, url) => {
    if (request.method !== 'GET') return sendJson(response, 405, { message: 'Method not allowed', status: 'fail' });
    const match = FEED_PATH.exec(url.pathname);
    if (!match) return sendJson(response, 404, { message: 'Page not found', status: 'fail' });

    if (mode === 'slow' && !(await waitUnlessClosed(response, slowDelayMs))) return;
    if (mode === 'fail') return sendServerError(response);
    if (mode === 'malformed') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return void response.end('{"items": [{"pk": "1", "code": ');
    }

    const userId = decodeURIComponent(match[1]);
    switch (userId) {
      case INSTAGRAM_SIM_USERS.hangs:
        return;
      case INSTAGRAM_SIM_USERS.malformed:
        return sendJson(response, 200, { items: [{ pk: null, media_type: 'photo' }], more_available: 'maybe' });
      case INSTAGRAM_SIM_USERS.notJson:
        response.writeHead(200, { 'content-type': 'application/json' });
        return void response.end('<html>Please wait a few minutes</html>');
      case INSTAGRAM_SIM_USERS.notFound:
        return sendUserNotFound(response);
    }
    if (/^500\d$/.test(userId)) return sendServerError(response);
    if (!/^\d+$/.test(userId)) return sendUserNotFound(response);
    const page = feedPage(userId, url.searchParams.get('max_id') ?? '');
    // A max_id the platform never issued for this account is refused, as the platform does.
    if (!page) return sendJson(response, 400, { message: 'Invalid max_id', status: 'fail' });
    sendJson(response, 200, page);
  }, options);

  return {
    ...server,
    setMode(nextMode, { delayMs = DEFAULT_SLOW_DELAY_MS } = {}) {
      mode = nextMode;
      slowDelayMs = delayMs;
    },
  };
}

function sendServerError(response: ServerResponse): void {
  sendJson(response, 500, { message: 'Please wait a few minutes before you try again.', status: 'fail' });
}

function sendUserNotFound(response: ServerResponse): void {
  sendJson(response, 404, { message: 'User not found', status: 'fail' });
}

// ---- the platform's feed shape, as served ----

export interface SimVersion {
  url: string;
  width: number;
  height: number;
}

export interface SimMedia {
  pk: string;
  media_type: 1 | 2;
  image_versions2: { candidates: SimVersion[] };
  video_versions?: SimVersion[];
  video_duration?: number;
}

export interface SimFeedItem {
  pk: string;
  code: string;
  taken_at: number;
  media_type: 1 | 2 | 8;
  image_versions2?: { candidates: SimVersion[] };
  video_versions?: SimVersion[];
  video_duration?: number;
  play_count?: number;
  like_count: number;
  comment_count: number;
  caption: { text: string } | null;
  accessibility_caption: string | null;
  carousel_media_count?: number;
  carousel_media?: SimMedia[];
  user: { pk: string; username: string; full_name: string };
}

export interface SimFeedPage {
  items: SimFeedItem[];
  num_results: number;
  more_available: boolean;
  next_max_id: string | null;
  status: 'ok';
}

/** The page a max_id names; null when it names none. */
function feedPage(userId: string, maxId: string): SimFeedPage | null {
  const pages = feedPages(userId);
  const cursorAfter = (pageIndex: number): string => `${pages[pageIndex].at(-1)!.pk}_${userId}`;
  const pageIndex = maxId === '' ? 0 : pages.findIndex((_, i) => i > 0 && cursorAfter(i - 1) === maxId);
  if (pageIndex < 0) return null;
  const items = pages[pageIndex];
  const isLast = pageIndex >= pages.length - 1;

  let moreAvailable = !isLast;
  let nextMaxId = isLast ? null : cursorAfter(pageIndex);
  if (isLast && pageIndex > 0 && userId === INSTAGRAM_SIM_USERS.repeatedCursor) {
    moreAvailable = true;
    nextMaxId = maxId;
  }
  if (isLast && pageIndex > 0 && userId === INSTAGRAM_SIM_USERS.emptyCursor) {
    moreAvailable = true;
    nextMaxId = '';
  }
  return { items, num_results: items.length, more_available: moreAvailable, next_max_id: nextMaxId, status: 'ok' };
}

function feedPages(userId: string): SimFeedItem[][] {
  if (userId === INSTAGRAM_SIM_USERS.noPosts) return [[]];
  const feed = generateFeed(userId);
  if (userId === INSTAGRAM_SIM_USERS.pinnedPost) feed.unshift(...feed.splice(INSTAGRAM_SIM_PAGE_SIZE, 1));
  const pages: SimFeedItem[][] = [];
  for (let i = 0; i < feed.length; i += INSTAGRAM_SIM_PAGE_SIZE) pages.push(feed.slice(i, i + INSTAGRAM_SIM_PAGE_SIZE));
  return pages;
}

const FEED_NEWEST_AT = Date.UTC(2026, 4, 1, 12) / 1000;
const IMAGE_WIDTHS = [750, 1080, 640, 480, 320, 240, 150]; // the largest is deliberately not first
const VIDEO_WIDTHS = [640, 720, 480];
const ASPECTS = [1, 5 / 4, 1 / 1.91];
const CODE_CHARACTERS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'];
const FIRST_NAMES = ['Ana', 'Bruno', 'Chloé', 'Dev', 'Emi', 'Farah', 'Gus', 'Hana'];
const LAST_NAMES = ['Silva', 'Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Reyes', 'Novak'];
const HANDLES = ['wander', 'pixel', 'studio', 'daily', 'kitchen', 'trail', 'atelier', 'frames'];
const CAPTIONS = ['Golden hour again', 'New drop is live', 'Behind the scenes', 'Sunday reset', 'Road trip, day 3'];
const TAGS = ['travel', 'food', 'design', 'fitness', 'music', 'ootd'];
const SCENES = ['1 person and outdoors', 'food', 'text', 'sky and ocean', '2 people smiling'];

function generateFeed(userId: string): SimFeedItem[] {
  const random = seededRandom(`instagram:${userId}`);
  const pageCount = random.int(2, 4);
  const total = (pageCount - 1) * INSTAGRAM_SIM_PAGE_SIZE + random.int(1, INSTAGRAM_SIM_PAGE_SIZE);
  const fullName = `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)}`;
  const user = { pk: userId, username: `${random.pick(HANDLES)}.${random.pick(HANDLES)}${userId.slice(-2)}`, full_name: fullName };
  const pkBase = 3_400_000_000_000_000_000n + BigInt(random.int(0, 999_999)) * 1_000_000_000n;

  const items: SimFeedItem[] = [];
  let takenAt = FEED_NEWEST_AT - random.int(0, 3_600);
  let kindsOfBlock: (1 | 2 | 8)[] = [];
  let carouselCount = 0;
  let videoCount = 0;
  for (let i = 0; i < total; i++) {
    // Each run of three posts holds one of each kind, in a seeded order, so every page mixes them.
    if (kindsOfBlock.length === 0) kindsOfBlock = shuffled([1, 2, 8] as const, random);
    const mediaType = kindsOfBlock.pop()!;
    // Newer posts have larger pks, as on the platform; pks pass 2^53, so they only survive as strings.
    const pk = (pkBase + BigInt((total - i) * 100)).toString();
    const common = {
      pk,
      code: Array.from({ length: 11 }, () => random.pick(CODE_CHARACTERS)).join(''),
      taken_at: takenAt,
      like_count: random.int(0, 250_000),
      comment_count: random.int(0, 5_000),
      // Every fifth caption and every fourth alt text are missing, so each page has some of both.
      caption: i % 5 === 4 ? null : { text: `${random.pick(CAPTIONS)} #${random.pick(TAGS)}` },
      accessibility_caption:
        i % 4 === 3
          ? null
          : `Photo by ${fullName} on ${new Date(takenAt * 1000).toDateString()}. May be an image of ${random.pick(SCENES)}.`,
      user,
    };
    if (mediaType === 8) {
      const childCount = random.int(2, 5);
      // Alternate the first child's kind so carousels led by an image and by a video both occur.
      const firstChildIsVideo = carouselCount++ % 2 === 1;
      const children = Array.from({ length: childCount }, (_, j) => {
        const childPk = (BigInt(pk) + BigInt(j + 1)).toString();
        const isVideo = j === 0 ? firstChildIsVideo : random.chance(0.3);
        return isVideo ? videoMedia(childPk, random) : imageMedia(childPk, random);
      });
      items.push({ ...common, media_type: 8, carousel_media_count: childCount, carousel_media: children });
    } else if (mediaType === 2) {
      // Every third video's view count passes 2^31, as popular ones do.
      const playCount = videoCount++ % 3 === 0 ? 2 ** 31 + random.int(0, 10_000_000) : random.int(1_000, 5_000_000);
      items.push({ ...common, ...videoMedia(pk, random), play_count: playCount });
    } else {
      items.push({ ...common, ...imageMedia(pk, random) });
    }
    takenAt -= random.int(600, 36 * 3_600);
  }
  return items;
}

function imageMedia(pk: string, random: SeededRandom): SimMedia {
  const aspect = random.pick(ASPECTS);
  return { pk, media_type: 1, image_versions2: { candidates: versions(pk, IMAGE_WIDTHS, aspect, 'jpg') } };
}

function videoMedia(pk: string, random: SeededRandom): SimMedia {
  const aspect = random.pick(ASPECTS);
  return {
    pk,
    media_type: 2,
    image_versions2: { candidates: versions(pk, IMAGE_WIDTHS, aspect, 'jpg') },
    video_versions: versions(pk, VIDEO_WIDTHS, aspect, 'mp4'),
    video_duration: random.int(3_000, 90_999) / 1_000,
  };
}

function versions(pk: string, widths: number[], aspect: number, extension: string): SimVersion[] {
  return widths.map((width) => {
    const height = Math.round(width * aspect);
    return { url: `https://scontent.sim.invalid/v/${pk}_${width}x${height}.${extension}`, width, height };
  });
}

function shuffled<T>(items: readonly T[], random: SeededRandom): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
