import { formatDuration } from '../domain/durations.js';
import type { ChannelRecord, VideoRecord } from '../inputs/records.js';
import { DAY_MS, DEMO_REFERENCE_DATE, demoRandom, isoBefore, round2, roundCount, roundOften } from './random.js';
import {
  brandNouns,
  capitalize,
  countryWeights,
  femaleFirstNames,
  fillTemplate,
  lastNames,
  maleFirstNames,
  shortTitles,
  type Topic,
  videoCategories,
  videoTitles,
} from './words.js';

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** What a video needs to know of its channel. */
export interface ChannelProfile {
  record: ChannelRecord;
  topic: Topic;
  categoryId: number;
}

/** A channel with platform-wide metrics of its own, a pure function of `seed`. */
export function makeChannel(seed: string, channelId: string): ChannelProfile {
  const rng = demoRandom(seed);
  const [categoryId, topic] = rng.pick(videoCategories);
  const gender = rng.weighted([['male', 40], ['female', 30], ['unknown', 30]] as const);
  const title =
    gender === 'unknown'
      ? `${capitalize(topic)} ${capitalize(rng.pick(brandNouns))}`
      : `${rng.pick(gender === 'male' ? maleFirstNames : femaleFirstNames)} ${rng.pick(lastNames)}${rng.chance(0.3) ? ' TV' : ''}`;
  const [country, , mainLanguage, otherLanguage] = rng.weighted(countryWeights);
  const followerCount = roundOften(rng, rng.logUniform(100, 1e8));
  const avgPlayCount = followerCount * rng.float(0.02, 0.8);
  const avgLikeCount = avgPlayCount * rng.float(0.01, 0.06);
  const avgCommentCount = avgLikeCount * rng.float(0.02, 0.1);
  const evaluationMin = (followerCount / 1000) * rng.float(5, 20);
  return {
    topic,
    categoryId,
    record: {
      channel_id: channelId,
      title,
      avatar: `https://demo-cdn.example.com/youtube/channels/${channelId}.jpg`,
      country,
      gender,
      language: rng.chance(0.8) ? mainLanguage : otherLanguage,
      follower_count: followerCount,
      avg_engagement_rate: round2(((avgLikeCount + avgCommentCount) / avgPlayCount) * 100),
      avg_play_count: round2(avgPlayCount),
      avg_like_count: round2(avgLikeCount),
      avg_comment_count: round2(avgCommentCount),
      video_count: Math.round(rng.logUniform(5, 3000)),
      recent_month_publish_count: rng.chance(0.3) ? 0 : rng.int(1, 30),
      evaluation_min: round2(evaluationMin),
      evaluation_max: round2(evaluationMin * rng.float(1.5, 3)),
      last_update_at: isoBefore(rng.int(0, 10 * DAY_MS)),
    },
  };
}

/** A video of `channel`, a pure function of `seed`: plays scale with the channel's followers. */
export function makeVideo(seed: string, videoId: string, channel: ChannelProfile, index: number): VideoRecord {
  const rng = demoRandom(seed);
  const isShort = rng.chance(0.3);
  const values = { topic: channel.topic, Topic: capitalize(channel.topic), n: String((index % 40) + 1) };
  const followers = channel.record.follower_count ?? 0;
  const playCount = roundOften(rng, followers * rng.logUniform(0.005, 1.5) * (isShort ? 3 : 1));
  const likeCount = Math.round(playCount * rng.float(0.005, 0.06));
  const commentCount = Math.round(likeCount * rng.float(0.01, 0.12));
  return {
    video_id: videoId,
    channel_id: channel.record.channel_id,
    title: fillTemplate(rng.pick(isShort ? shortTitles : videoTitles), values),
    description: `${fillTemplate('Everything about {topic}, from the {Topic} channel.', values)} #${channel.topic}${isShort ? ' #shorts' : ''}`,
    cover_url: `https://demo-cdn.example.com/youtube/vi/${videoId}/hqdefault.jpg`,
    // Most videos from 2026, the oldest from late 2025.
    create_at: isoBefore(Math.floor(380 * DAY_MS * rng.next() ** 1.3) + rng.int(1, 3_600_000)),
    duration: formatDuration(isShort ? rng.int(8, 60) : Math.round(rng.logUniform(90, 3 * 3600))),
    video_url: isShort ? `https://www.youtube.com/shorts/${videoId}` : `https://www.youtube.com/watch?v=${videoId}`,
    video_type: isShort ? 'short' : 'video',
    category_id: rng.chance(0.85) ? channel.categoryId : rng.pick(videoCategories)[0],
    like_count: likeCount,
    comment_count: commentCount,
    play_count: playCount,
    engagement_rate: playCount > 0 ? round2(((likeCount + commentCount) / playCount) * 100) : 0,
    last_update_at: isoBefore(rng.int(0, 5 * DAY_MS)),
  };
}

export const demoChannelId = (index: number) => `UC${demoRandom(`demo:channel-id:${index}`).chars(ID_ALPHABET, 22)}`;
export const demoVideoId = (index: number) => demoRandom(`demo:video-id:${index}`).chars(ID_ALPHABET, 11);

/** The mega channel's videos: billions of plays, past 2^32, the first exactly 15,000,000,000. */
export const MEGA_CHANNEL_VIDEOS = 12;
export const MEGA_PLAY_COUNT = 15_000_000_000;

function megaChannel(): ChannelProfile {
  const profile = makeChannel('demo:channel:0', demoChannelId(0));
  return {
    topic: 'music',
    categoryId: 10,
    record: { ...profile.record, title: 'Mega Hits Music', country: 'KR', language: 'ko', gender: 'unknown', follower_count: 250_000_000 },
  };
}

/**
 * Channels and their videos. Channel 0 is the mega channel; the other videos go to channels 1…n-1,
 * the lower-numbered ones getting more. A channel's averages and recent count are computed from
 * its demo videos, so channel filters on video search agree with the videos shown.
 */
export function demoChannelsAndVideos(channelCount: number, videoCount: number): { channels: ChannelRecord[]; videos: VideoRecord[] } {
  const profiles = Array.from({ length: channelCount }, (_, index) =>
    index === 0 ? megaChannel() : makeChannel(`demo:channel:${index}`, demoChannelId(index)),
  );
  const videosByChannel = profiles.map((): VideoRecord[] => []);
  const videos = Array.from({ length: videoCount }, (_, index) => {
    const channelIndex =
      index < MEGA_CHANNEL_VIDEOS ? 0 : 1 + Math.floor((channelCount - 1) * demoRandom(`demo:video-channel:${index}`).next() ** 1.5);
    let video = makeVideo(`demo:video:${index}`, demoVideoId(index), profiles[channelIndex], index);
    if (channelIndex === 0) {
      const playCount = index === 0 ? MEGA_PLAY_COUNT : roundCount(demoRandom(`demo:mega:${index}`).logUniform(4.3e9, 1.2e10));
      const likeCount = Math.round(playCount * 0.004);
      const commentCount = Math.round(playCount * 0.0002);
      const engagementRate = round2(((likeCount + commentCount) / playCount) * 100);
      video = { ...video, play_count: playCount, like_count: likeCount, comment_count: commentCount, engagement_rate: engagementRate };
    }
    videosByChannel[channelIndex].push(video);
    return video;
  });
  const recentSince = DEMO_REFERENCE_DATE.getTime() - 30 * DAY_MS;
  const channels = profiles.map(({ record }, index) => {
    const own = videosByChannel[index];
    if (own.length === 0) return record;
    const mean = (pick: (video: VideoRecord) => number) => round2(own.reduce((sum, video) => sum + pick(video), 0) / own.length);
    return {
      ...record,
      avg_play_count: mean((video) => video.play_count ?? 0),
      avg_like_count: mean((video) => video.like_count ?? 0),
      avg_comment_count: mean((video) => video.comment_count ?? 0),
      avg_engagement_rate: mean((video) => video.engagement_rate ?? 0),
      video_count: Math.max(record.video_count ?? 0, own.length),
      recent_month_publish_count: own.filter((video) => Date.parse(video.create_at) >= recentSince).length,
    };
  });
  return { channels, videos };
}
