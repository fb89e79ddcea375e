// Vocabulary of the demo data set. Topics recur in usernames, titles and logins, so a search
// `query` such as "tech" or "vlog" matches several records and misses the rest.

export const maleFirstNames = [
  'James', 'Lucas', 'Mateo', 'Noah', 'Kenji', 'Arjun', 'Felix', 'Hugo', 'Leon', 'Omar',
  'Diego', 'Minjun', 'Tomás', 'Ethan', 'Rafael', 'Pierre', 'Jonas', 'Ravi', 'Samuel', 'Yuto',
] as const;
export const femaleFirstNames = [
  'Emma', 'Sofia', 'Mia', 'Yuki', 'Priya', 'Chloé', 'Lena', 'Ana', 'Olivia', 'Amara',
  'Hana', 'Isabela', 'Clara', 'Jiwoo', 'Lucía', 'Nina', 'Ava', 'Marie', 'Aisha', 'Zoe',
] as const;
export const lastNames = [
  'Smith', 'Garcia', 'Tanaka', 'Müller', 'Silva', 'Kim', 'Patel', 'Martin', 'Rossi', 'Dubois',
  'Johnson', 'Santos', 'Suzuki', 'Schmidt', 'Lopez', 'Park', 'Sharma', 'Bernard', 'Brown', 'Okafor',
] as const;

export const topics = [
  'tech', 'food', 'travel', 'fitness', 'gaming', 'music', 'art', 'finance',
  'news', 'fashion', 'photo', 'science', 'crypto', 'pets', 'cars', 'books',
] as const;
export type Topic = (typeof topics)[number];

export const brandNouns = ['daily', 'hub', 'insider', 'lab', 'world', 'guru', 'life', 'zone', 'club', 'talk'] as const;

/** Country, weight, its main language, and a second language some creators there use. */
export const countries = [
  ['US', 30, 'en', 'es'],
  ['GB', 10, 'en', 'en'],
  ['IN', 10, 'hi', 'en'],
  ['BR', 8, 'pt', 'en'],
  ['JP', 8, 'ja', 'en'],
  ['DE', 7, 'de', 'en'],
  ['FR', 6, 'fr', 'en'],
  ['ES', 6, 'es', 'en'],
  ['CA', 5, 'en', 'fr'],
  ['KR', 4, 'ko', 'en'],
  ['MX', 3, 'es', 'en'],
  ['NG', 2, 'en', 'en'],
  ['', 1, '', 'en'],
] as const;
export const countryWeights = countries.map((entry) => [entry, entry[1]] as const);

export const postPhrases = [
  'Just shipped something new, thread below',
  'Big announcement coming this week',
  'What do you all think about this?',
  'Behind the scenes of today',
  'My honest review after a month',
  'Ten things I wish I knew earlier',
  'Live in one hour, come say hi',
  'New video is up, link in bio',
] as const;

/** YouTube's own video category ids, with the topics a channel of that category covers. */
export const videoCategories = [
  [28, 'tech'], [28, 'science'], [26, 'food'], [19, 'travel'], [17, 'fitness'], [20, 'gaming'],
  [10, 'music'], [1, 'art'], [27, 'finance'], [25, 'news'], [26, 'fashion'], [22, 'photo'],
  [27, 'crypto'], [15, 'pets'], [2, 'cars'], [24, 'books'],
] as const satisfies readonly (readonly [number, Topic])[];

export const videoTitles = [
  '{Topic} tutorial for beginners',
  'How to get started with {topic} in 2026',
  'I tried {topic} every day for 30 days',
  'Top 10 {topic} mistakes to avoid',
  'My {topic} vlog #{n}',
  'Honest {topic} review: worth it?',
  'Reacting to your {topic} setups',
  '{Topic} Q&A live replay',
  'The ultimate {topic} guide (part {n})',
  'Unboxing the new {topic} gear',
] as const;

export const shortTitles = [
  '{Topic} hack in 30 seconds #shorts',
  'Wait for it... #{topic} #shorts',
  'POV: your first day of {topic} #shorts',
  'One {topic} tip you need #shorts',
] as const;

/** Live-stream games: the platform's id and name, with a weight for how many streams play them. */
export const games = [
  ['509658', 'Just Chatting', 20],
  ['21779', 'League of Legends', 8],
  ['32982', 'Grand Theft Auto V', 7],
  ['516575', 'VALORANT', 7],
  ['33214', 'Fortnite', 6],
  ['27471', 'Minecraft', 6],
  ['511224', 'Apex Legends', 4],
  ['29595', 'Dota 2', 4],
  ['32399', 'Counter-Strike', 5],
  ['26936', 'Music', 3],
  ['509660', 'Art', 2],
  ['1469308723', 'Software and Game Development', 2],
] as const;

export const streamLanguages = [
  ['en', 45], ['es', 12], ['de', 8], ['fr', 6], ['pt', 8], ['ja', 6], ['ko', 5], ['ru', 6], ['other', 4],
] as const;

export const streamTags = ['English', 'Chill', 'Competitive', 'Speedrun', 'NoBackseating', 'Cozy', 'Ranked', 'Funny', 'Educational', 'Music'] as const;

export const streamTitles = [
  'Ranked grind until {game} rank up',
  '!drops {game} all day',
  'chill {game} stream, come hang',
  'first time playing {game}',
  '{game} tournament practice',
  'late night {game} with chat',
] as const;

export const loginParts = ['pixel', 'shadow', 'cozy', 'turbo', 'lucky', 'mighty', 'frost', 'neon', 'silent', 'wild'] as const;
export const loginNouns = ['fox', 'gaming', 'wolf', 'plays', 'tv', 'live', 'ninja', 'panda', 'knight', 'owl'] as const;

export const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (placeholder, name: string) => values[name] ?? placeholder);
}
