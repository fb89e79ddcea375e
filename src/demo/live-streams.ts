import type { LiveStreamRecord } from '../inputs/records.js';
import { DAY_MS, DEMO_REFERENCE_DATE, demoRandom, isoInstant, roundCount } from './random.js';
import { capitalize, fillTemplate, games, loginNouns, loginParts, streamLanguages, streamTags, streamTitles } from './words.js';

/** Viewer counts that several streams share, so the viewer-count order needs its id tie-break. */
const TIED_VIEWER_COUNTS = [1_000, 250, 42] as const;

/** One live stream of the snapshot taken at the reference date, a pure function of `seed`. */
export function makeLiveStream(seed: string, id: string, userId: string, index: number): LiveStreamRecord {
  const rng = demoRandom(seed);
  // Logins are unique: a few plain ones ("pixelfox"), the rest carry the index ("neonwolf123").
  const plain = index % 7 === 0 && index < 7 * loginParts.length * loginNouns.length;
  const login = plain
    ? `${loginParts[(index / 7) % loginParts.length]}${loginNouns[Math.floor(index / (7 * loginParts.length))]}`
    : `${rng.pick(loginParts)}${rng.pick(loginNouns)}${index}`;
  const [gameId, gameName] = rng.weighted(games.map((game) => [game, game[2]] as const));
  const language = rng.weighted(streamLanguages);
  const viewers = rng.logUniform(1, 250_000);
  const viewerCount =
    index % 10 === 0 ? TIED_VIEWER_COUNTS[(index / 10) % TIED_VIEWER_COUNTS.length] : rng.chance(0.3) ? roundCount(viewers) : Math.round(viewers);
  return {
    id,
    user_id: userId,
    user_login: login,
    user_name: capitalize(login),
    game_id: gameId,
    game_name: gameName,
    type: rng.chance(0.95) ? 'live' : '',
    title: fillTemplate(rng.pick(streamTitles), { game: gameName }),
    viewer_count: viewerCount,
    started_at: isoInstant(DEMO_REFERENCE_DATE.getTime() - rng.int(5 * 60_000, DAY_MS / 2)),
    language,
    thumbnail_url: `https://demo-cdn.example.com/twitch/previews/live_user_${login}-{width}x{height}.jpg`,
    tags: [...(language === 'en' ? ['English'] : []), ...rng.sample(streamTags.slice(1), rng.int(0, 3))],
    is_mature: rng.chance(0.2),
    last_update_at: DEMO_REFERENCE_DATE.toISOString(),
  };
}

export const demoStreamId = (index: number) => String(41_000_000_000 + index * 7_919);
export const demoStreamUserId = (index: number) => String(100_000_000 + index * 104_729);

export function demoLiveStreams(count: number): LiveStreamRecord[] {
  return Array.from({ length: count }, (_, index) =>
    makeLiveStream(`demo:stream:${index}`, demoStreamId(index), demoStreamUserId(index), index),
  );
}
