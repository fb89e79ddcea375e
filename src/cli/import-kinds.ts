// The kinds `import` takes, apart from their schemas: the usage text (usage.ts) names them without
// loading zod.
export const importKinds = ['categories', 'creators', 'channels', 'videos', 'live-streams'] as const;
export type ImportKind = (typeof importKinds)[number];
