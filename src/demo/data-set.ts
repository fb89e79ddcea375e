import type { CategoryRecord, ChannelRecord, CreatorRecord, LiveStreamRecord, VideoRecord } from '../inputs/records.js';
import { assignableCategoryIds, demoCategories } from './categories.js';
import { demoCreators } from './creators.js';
import { demoLiveStreams } from './live-streams.js';
import { demoChannelsAndVideos } from './videos.js';

export const DEMO_SIZES = { creators: 3_000, channels: 400, videos: 5_000, liveStreams: 300 } as const;

export interface DemoDataSet {
  categories: CategoryRecord[];
  creators: CreatorRecord[];
  channels: ChannelRecord[];
  videos: VideoRecord[];
  liveStreams: LiveStreamRecord[];
}

/** The whole demo data set as import records: the same on every call, on every machine. */
export function demoDataSet(): DemoDataSet {
  const categories = demoCategories();
  const { channels, videos } = demoChannelsAndVideos(DEMO_SIZES.channels, DEMO_SIZES.videos);
  return {
    categories,
    creators: demoCreators(DEMO_SIZES.creators, assignableCategoryIds(categories)),
    channels,
    videos,
    liveStreams: demoLiveStreams(DEMO_SIZES.liveStreams),
  };
}
