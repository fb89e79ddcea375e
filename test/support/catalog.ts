import type { Kysely } from 'kysely';
import type { Database, NewChannel, NewCreator, NewVideo } from '../../src/store/database.js';

// A small known catalogue with deliberate ties in every sort key. Tests compute their expected
// answers from these arrays with plain JavaScript and compare them with the service's answers.

export const categories = [
  { id: 1, parent_id: null, level: 1, name: 'Tech' },
  { id: 10, parent_id: 1, level: 2, name: 'Gaming' },
  { id: 100, parent_id: 10, level: 3, name: 'RPG' },
  { id: 101, parent_id: 10, level: 3, name: 'Shooters' },
  { id: 11, parent_id: 1, level: 2, name: 'Gadgets' },
  { id: 110, parent_id: 11, level: 3, name: 'Phones' },
  { id: 2, parent_id: null, level: 1, name: 'Lifestyle' },
  { id: 20, parent_id: 2, level: 2, name: 'Food' },
];

const names = ['alpha', 'Alphabet', 'beta', 'gamma_ray', 'delta', '100%real', 'x_y', 'omega'];
const countries = ['US', 'GB', 'DE', 'JP'];
const languages = ['en', 'en', 'de', 'ja'];
const categorySets = [[100], [101], [110], [20], [100, 110], []];

export interface SeedCreator extends NewCreator {
  user_id: string;
  follower_count: number;
  avg_engagement_rate: number;
}

export const creators: SeedCreator[] = Array.from({ length: 40 }, (_, i) => {
  const avgLike = (i % 6) * 10.5;
  const avgComment = (i % 4) * 2.25;
  const avgRetweet = (i % 3) * 1.5;
  return {
    platform: 'twitter',
    user_id: `u${String(i).padStart(3, '0')}`,
    username: `${names[i % names.length]}${i}`,
    // Full names that start with another creator's name give relevance its full-name-prefix tier.
    full_name:
      i % 5 === 0
        ? `The ${names[(i + 3) % names.length]} Show`
        : i % 7 === 3
          ? `${names[(i + 5) % names.length]} fan club`
          : `Person ${i}`,
    avatar: `https://img.example/${i}.jpg`,
    country: countries[i % 4],
    language: languages[i % 4],
    gender: i % 3,
    // Ties: eight creators share each follower count; one passes 2^32 by far.
    follower_count: i === 7 ? 15_000_000_000 : 1000 * (i % 5),
    is_verified: i % 4 === 1,
    has_email: i % 3 === 2,
    avg_engagement_rate: (i % 7) * 1.25,
    avg_video_engagement_rate: (i % 5) * 0.5,
    avg_comment_count: avgComment,
    avg_like_count: avgLike,
    avg_retweet_count: avgRetweet,
    avg_view_count: (i % 8) * 100,
    retweet_ratio: (i % 10) * 5,
    reply_ratio: (i % 9) * 2,
    post_count: 100 + i,
    video_count: i,
    last_publish_at: new Date(Date.UTC(2026, i % 12, 1 + (i % 28), 12)),
    recent_month_publish_count: i % 11,
    recent_week_publish_count: i % 4,
    last_post:
      i % 2 === 0
        ? JSON.stringify({
            post_id: `p${i}`,
            description: `post ${i}`,
            create_at: new Date(Date.UTC(2026, i % 12, 1 + (i % 28), 12)).toISOString(),
            cover_url: `https://img.example/p${i}.jpg`,
            like_count: i * 3,
            comment_count: i,
            retweet_count: i * 2,
            view_count: i * 1000,
          })
        : null,
    evaluation_min: 100 + i,
    evaluation_max: 200 + i * 2,
    category_ids: categorySets[i % categorySets.length],
  };
});

export const channels: (NewChannel & { channel_id: string })[] = Array.from({ length: 6 }, (_, i) => ({
  channel_id: `ch${i}`,
  title: `Channel ${i}`,
  avatar: `https://img.example/ch${i}.jpg`,
  country: countries[i % 4],
  language: languages[i % 4],
  gender: i % 3,
  follower_count: i === 5 ? 9_000_000_000 : (i + 1) * 10_000,
  avg_engagement_rate: i * 1.5,
  avg_play_count: i * 1000,
  avg_like_count: i * 50,
  avg_comment_count: i * 5,
  video_count: 5 + i,
  recent_month_publish_count: i * 2,
  evaluation_min: 500 + i,
  evaluation_max: 900 + i,
}));

export const videos: (NewVideo & { video_id: string; create_at: Date; play_count: number })[] = Array.from({ length: 30 }, (_, i) => ({
  video_id: `v${String(i).padStart(3, '0')}`,
  channel_id: `ch${i % 6}`,
  title: i % 4 === 0 ? `Alpha guide ${i}` : `Video ${i} about ${names[i % names.length]}`,
  // Some descriptions mention "alpha" where the title does not, for relevance order.
  description: i % 3 === 0 ? 'contains 50% off' : i % 5 === 1 ? 'an alpha preview' : `description ${i}`,
  cover_url: `https://img.example/v${i}.jpg`,
  // Ties: pairs of videos share a publish time.
  create_at: new Date(Date.UTC(2026, 0, 1 + Math.floor(i / 2), 8)),
  duration_seconds: i * 37,
  video_url: `https://video.example/${i}`,
  video_type: i % 3 === 0 ? 2 : 1,
  category_id: [100, 101, 110, 20][i % 4],
  like_count: i * 10,
  comment_count: i,
  play_count: i === 3 ? 15_000_000_000 : i * 1000,
  engagement_rate: (i % 5) * 0.75,
}));

export async function loadCatalog(db: Kysely<Database>): Promise<void> {
  await db.insertInto('categories').values(categories).execute();
  await db.insertInto('creators').values(creators).execute();
  await db.insertInto('channels').values(channels).execute();
  await db.insertInto('videos').values(videos).execute();
}
