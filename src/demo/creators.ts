import type { CreatorRecord } from '../inputs/records.js';
import { DAY_MS, demoRandom, isoBefore, round2, roundOften, type DemoRandom } from './random.js';
import { brandNouns, capitalize, countryWeights, femaleFirstNames, lastNames, maleFirstNames, postPhrases, topics } from './words.js';

const RECENT_MONTH_MS = 30 * DAY_MS;
const RECENT_WEEK_MS = 7 * DAY_MS;

const asciiHandle = (name: string) => name.normalize('NFD').replace(/[^A-Za-z]/g, '').toLowerCase();

function identity(rng: DemoRandom, gender: 'male' | 'female' | 'unknown', index: number) {
  const topic = rng.pick(topics);
  if (gender === 'unknown') {
    // Brand and media accounts: no person, no gender.
    const noun = rng.pick(brandNouns);
    return { username: `${topic}${noun}${index % 100}`, fullName: `${capitalize(topic)} ${capitalize(noun)}` };
  }
  const first = rng.pick(gender === 'male' ? maleFirstNames : femaleFirstNames);
  const last = rng.pick(lastNames);
  const handle = asciiHandle(first);
  const username = rng.pick([
    `${handle}_${topic}`,
    `${topic}with${handle}`,
    `${handle}${asciiHandle(last)}${index % 1000}`,
    `the${handle}${topic}`,
  ]);
  return { username, fullName: `${first} ${last}` };
}

/**
 * One creator, a pure function of `seed`: metrics hang together (engagement from followers, recent
 * counts only when the last post is recent) and spread over every search filter's range.
 */
export function makeCreator(seed: string, userId: string, index: number, categoryIds: readonly number[]): CreatorRecord {
  const rng = demoRandom(seed);
  const gender = rng.weighted([['male', 45], ['female', 40], ['unknown', 15]] as const);
  const { username, fullName } = identity(rng, gender, index);
  const [country, , mainLanguage, otherLanguage] = rng.weighted(countryWeights);
  const language = rng.chance(0.8) ? mainLanguage : otherLanguage;

  // Every 97th creator has exactly one million followers: a tie the follower sort must break by id.
  const followerCount = index % 97 === 0 ? 1_000_000 : roundOften(rng, rng.logUniform(30, 2e8));
  const engagementRate = rng.logUniform(0.1, 15) * (followerCount > 1e6 ? 0.5 : 1);
  const engagementPerPost = (followerCount * engagementRate) / 100;
  const likeShare = rng.float(0.55, 0.8);
  const commentShare = rng.float(0.05, 0.15);
  const avgLikeCount = engagementPerPost * likeShare;
  const avgCommentCount = engagementPerPost * commentShare;
  const avgRetweetCount = engagementPerPost * (1 - likeShare - commentShare);

  const neverPosted = rng.chance(0.04);
  // Skewed towards the reference date: most accounts posted in 2026, some only in 2025.
  const lastPublishMs = neverPosted ? null : Math.floor(480 * DAY_MS * rng.next() ** 2) + rng.int(0, DAY_MS - 1);
  const monthCount = lastPublishMs !== null && lastPublishMs < RECENT_MONTH_MS ? rng.int(1, 120) : 0;
  const weekCount = lastPublishMs !== null && lastPublishMs < RECENT_WEEK_MS ? rng.int(1, Math.max(1, Math.floor(monthCount / 3))) : 0;
  const postCount = neverPosted ? 0 : Math.max(monthCount, Math.round(rng.logUniform(5, 80_000)));
  const videoCount = Math.round(postCount * rng.float(0, 0.3));

  const evaluationMin = (followerCount / 1000) * rng.float(2, 8) * (1 + engagementRate / 10);
  const lastPublishAt = lastPublishMs === null ? null : isoBefore(lastPublishMs);
  return {
    platform: 'twitter',
    user_id: userId,
    username,
    full_name: fullName,
    avatar: `https://demo-cdn.example.com/twitter/avatars/${userId}.jpg`,
    country,
    language,
    gender,
    follower_count: followerCount,
    is_verified: rng.chance(followerCount > 1e6 ? 0.6 : followerCount > 1e5 ? 0.15 : 0.02),
    has_email: rng.chance(0.35),
    avg_engagement_rate: round2(engagementRate),
    avg_video_engagement_rate: videoCount > 0 ? round2(engagementRate * rng.float(0.5, 2)) : 0,
    avg_comment_count: round2(avgCommentCount),
    avg_like_count: round2(avgLikeCount),
    avg_retweet_count: round2(avgRetweetCount),
    avg_view_count: round2(followerCount * rng.float(0.05, 0.6)),
    retweet_ratio: round2(90 * rng.next() ** 1.5),
    reply_ratio: round2(rng.float(0, 60)),
    post_count: postCount,
    video_count: videoCount,
    last_publish_at: lastPublishAt,
    recent_month_publish_count: monthCount,
    recent_week_publish_count: weekCount,
    last_post:
      lastPublishAt !== null && rng.chance(0.9)
        ? {
            post_id: String(1_800_000_000_000_000 + index * 1_000 + rng.int(0, 999)),
            description: rng.pick(postPhrases),
            create_at: lastPublishAt,
            cover_url: rng.chance(0.5) ? `https://demo-cdn.example.com/twitter/media/${userId}.jpg` : '',
            like_count: Math.round(avgLikeCount * rng.float(0.3, 3)),
            comment_count: Math.round(avgCommentCount * rng.float(0.3, 3)),
            retweet_count: Math.round(avgRetweetCount * rng.float(0.3, 3)),
            view_count: Math.round(followerCount * rng.float(0.05, 1.5)),
          }
        : null,
    evaluation_min: round2(evaluationMin),
    evaluation_max: round2(evaluationMin * rng.float(1.5, 3)),
    category_ids: rng.sample(categoryIds, rng.int(1, 3)).sort((a, b) => a - b),
    last_update_at: isoBefore(rng.int(0, 10 * DAY_MS)),
  };
}

export const demoCreatorId = (index: number) => String(1_500_000_000_000 + index * 7_919);

export function demoCreators(count: number, categoryIds: readonly number[]): CreatorRecord[] {
  return Array.from({ length: count }, (_, index) => makeCreator(`demo:creator:${index}`, demoCreatorId(index), index, categoryIds));
}
