import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Served } from './served.js';

// What a GraphQL user runs first: GraphQL Code Generator (typescript + typescript-operations)
// against the live endpoint's introspection, then the TypeScript compiler, strict, over code that
// uses the generated types: searches, lookups by key, Node, relations and facets.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

const operations = `
query TopCreators($n: Int, $filter: CreatorFilter) {
  viewer { plan quotaRemaining }
  creators(first: $n, filter: $filter, sortBy: FOLLOWER_COUNT) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { ...CreatorCard }
  }
}

fragment CreatorCard on Creator { userId username followerCount gender lastUpdateAt }

query VideosWithChannels($first: Int = 5) {
  videos(first: $first) {
    edges { cursor node { title playCount videoType channel { title followerCount } } }
  }
}

query Live { liveStreams(first: 3) { totalCount nodes { id gameName viewerCount } } }

query ChannelWithVideos($channelId: String!) {
  channel(channelId: $channelId) {
    id
    title
    videos(first: 5, filter: { videoType: SHORT }) {
      totalCount
      facets { month { value count } }
      nodes { videoId title category { name parent { name } } }
    }
  }
}

query CreatorFacets($filter: CreatorFilter) {
  creators(filter: $filter, first: 5) {
    totalCount
    facets {
      country(excludeOwn: true) { value count }
      gender { value count }
      followerCount(edges: [10000, 100000]) { min max count }
    }
    nodes { id userId categories { categoryId name } }
  }
}

query Lookup($id: ID!, $ids: [ID!]!) {
  node(id: $id) { id ... on Creator { username } }
  nodes(ids: $ids) { __typename id ... on Video { title } ... on Channel { title } }
  creator(userId: "1") { followerCount }
}
`;

// Compiles only if the generated types say what the schema says (nullable roots, SafeInt as number, enums as unions).
const usage = `
import type {
  ChannelWithVideosQuery,
  CreatorCardFragment,
  CreatorFacetsQuery,
  LiveQuery,
  LookupQuery,
  TopCreatorsQuery,
  TopCreatorsQueryVariables,
  VideosWithChannelsQuery,
} from './operations';
import type { Creator, Query } from './schema';

// The whole schema's types: a root search field, and a record's counts as numbers.
export const searches: (keyof Query)[] = ['creators', 'videos', 'liveStreams'];
export const followers = (creator: Creator): number => creator.followerCount;

export const variables: TopCreatorsQueryVariables = { n: 3, filter: { locations: ['US'], followerCountMin: 1000 } };

export function biggest(answer: TopCreatorsQuery): CreatorCardFragment | undefined {
  const plan: string | undefined = answer.viewer?.plan;
  void plan;
  return answer.creators?.nodes.reduce<CreatorCardFragment | undefined>((best, creator) => (best && best.followerCount >= creator.followerCount ? best : creator), undefined);
}

export const channels = (answer: VideosWithChannelsQuery): string[] => (answer.videos?.edges ?? []).map((edge) => edge.node.channel.title);
export const kinds = (answer: VideosWithChannelsQuery) => answer.videos?.edges.map((edge): 'SHORT' | 'VIDEO' => edge.node.videoType);
export const viewers = (answer: LiveQuery): number => (answer.liveStreams?.nodes ?? []).reduce((sum, stream) => sum + stream.viewerCount, 0);

// Relations and facets: a channel's short videos, their categories, counts as numbers.
export const shortsByMonth = (answer: ChannelWithVideosQuery): [string, number][] =>
  (answer.channel?.videos.facets.month ?? []).map((bucket) => [bucket.value, bucket.count]);
export const parents = (answer: ChannelWithVideosQuery): (string | undefined)[] =>
  (answer.channel?.videos.nodes ?? []).map((video) => video.category?.parent?.name);
export const histogram = (answer: CreatorFacetsQuery): (number | null | undefined)[] =>
  (answer.creators?.facets.followerCount ?? []).map((bucket) => bucket.min);
// Node: a lookup may find nothing; nodes answers each id, null where nothing has it.
export const kindsFound = (answer: LookupQuery): string[] => answer.nodes.map((node) => node?.__typename ?? 'missing');

// @ts-expect-error: a lookup may find nothing
export const alwaysThere = (answer: LookupQuery) => answer.creator.followerCount;
// @ts-expect-error: a field the operation did not select is not in its type
export const notSelected = (answer: LiveQuery) => answer.liveStreams?.nodes[0]?.title;
// @ts-expect-error: creators is nullable (a failing root leaves the others' data)
export const notNull = (answer: TopCreatorsQuery) => answer.creators.totalCount;
`;

export function codegen(served: () => Served): void {
  describe('GraphQL Code Generator against the live endpoint', { timeout: 240_000 }, () => {
    let dir: string;

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'cds-codegen-'));
    });
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('generates types for the operations from introspection, and strict TypeScript accepts code using them', async () => {
      const { server } = served();
      writeFileSync(join(dir, 'operations.graphql'), operations);
      writeFileSync(
        join(dir, 'codegen.json'),
        JSON.stringify({
          overwrite: true,
          schema: `${server.url}/graphql`,
          documents: join(dir, 'operations.graphql'),
          config: { strictScalars: true, scalars: { SafeInt: 'number', Decimal: 'string', DateTime: 'string' }, enumsAsTypes: true },
          // typescript-operations 6 writes the input and enum types its operations use itself: the
          // schema's types go to a file of their own.
          generates: {
            [join(dir, 'schema.ts')]: { plugins: ['typescript'] },
            [join(dir, 'operations.ts')]: { plugins: ['typescript-operations'] },
          },
        }),
      );
      // From the repository: the generator finds its plugins from where it runs.
      await run(bin('graphql-codegen'), ['--config', join(dir, 'codegen.json')], { cwd: root });
      const generated = readFileSync(join(dir, 'operations.ts'), 'utf8');
      expect(generated).toContain('export type TopCreatorsQuery');
      expect(generated).toContain('export type CreatorCardFragment');
      expect(readFileSync(join(dir, 'schema.ts'), 'utf8')).toContain('export type Query');

      writeFileSync(join(dir, 'usage.ts'), usage);
      const flags = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler', '--skipLibCheck'];
      const checked = await run(bin('tsc'), [...flags, join(dir, 'usage.ts')], { cwd: dir }).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      );
      expect(checked).toBe('');

      // And the compiler does read them: code that misreads the schema is refused.
      writeFileSync(join(dir, 'wrong.ts'), `import type { LiveQuery } from './operations';\nexport const n = (a: LiveQuery): string => a.liveStreams!.totalCount;\n`);
      const wrong = await run(bin('tsc'), [...flags, join(dir, 'wrong.ts')], { cwd: dir }).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      );
      expect(wrong).toMatch(/Type 'number' is not assignable to type 'string'/);
    });
  });
}
