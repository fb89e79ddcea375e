import type { CategoryRecord } from '../inputs/records.js';

// The demo taxonomy: 8 level-1 categories, 5 level-2 under each (40) and 3 or 4 level-3 under each
// of those (150). Ids: level 1 is 1-8, level 2 is 101-140, level 3 is 1001-1150.

const tree: readonly (readonly [string, readonly (readonly [string, readonly string[]])[]])[] = [
  ['Entertainment', [
    ['Comedy', ['Stand-up', 'Sketches', 'Memes', 'Pranks']],
    ['Movies', ['Film reviews', 'Trailers', 'Behind the scenes']],
    ['TV series', ['Recaps', 'Fan theories', 'Anime', 'Reality TV']],
    ['Celebrities', ['Interviews', 'Red carpet', 'Gossip']],
    ['Podcasts', ['Talk shows', 'True crime', 'Storytelling', 'Interviews & chats']],
  ]],
  ['Gaming', [
    ['PC games', ['Strategy', 'Shooters', 'Simulation', 'Indie games']],
    ['Console games', ['Nintendo', 'PlayStation', 'Xbox']],
    ['Mobile games', ['Puzzle games', 'Gacha', 'Casual', 'Mobile esports']],
    ['Esports', ['Tournaments', 'Team news', 'Pro players', 'Casting']],
    ['Game development', ['Game design', 'Pixel art', 'Devlogs']],
  ]],
  ['Sports', [
    ['Football', ['Premier League', 'La Liga', 'Transfers', 'Highlights']],
    ['Basketball', ['NBA', 'EuroLeague', 'Streetball']],
    ['Fitness', ['Bodybuilding', 'Running', 'Yoga', 'Home workouts']],
    ['Motorsport', ['Formula 1', 'Rally', 'MotoGP', 'Karting']],
    ['Outdoor sports', ['Climbing', 'Surfing', 'Skiing']],
  ]],
  ['Technology', [
    ['Consumer electronics', ['Smartphones', 'Laptops', 'Wearables', 'Audio gear']],
    ['Software development', ['Web development', 'Open source', 'DevOps', 'Programming languages']],
    ['Artificial intelligence', ['Machine learning', 'AI tools', 'Robotics']],
    ['Crypto and web3', ['Bitcoin', 'DeFi', 'NFTs', 'Crypto trading']],
    ['Science', ['Space', 'Physics', 'Biology', 'Climate']],
  ]],
  ['Lifestyle', [
    ['Food', ['Recipes', 'Restaurant reviews', 'Baking', 'Street food']],
    ['Travel', ['Budget travel', 'Luxury travel', 'Van life']],
    ['Fashion', ['Streetwear', 'Sustainable fashion', 'Sneakers', 'Beauty']],
    ['Home', ['Interior design', 'DIY', 'Gardening', 'Cleaning']],
    ['Parenting', ['Babies', 'Teens', 'Family vlogs']],
  ]],
  ['Education', [
    ['Languages', ['English learning', 'Japanese', 'Spanish', 'Sign language']],
    ['Personal finance', ['Investing', 'Budgeting', 'Real estate', 'Side hustles']],
    ['History', ['Ancient history', 'World wars', 'Local history']],
    ['Career', ['Job hunting', 'Productivity', 'Entrepreneurship', 'Remote work']],
    ['Mathematics', ['Math puzzles', 'Exam prep', 'Statistics']],
  ]],
  ['Music', [
    ['Pop', ['K-pop', 'J-pop', 'Latin pop', 'Pop covers']],
    ['Hip hop', ['Rap battles', 'Beat making', 'Hip hop news']],
    ['Electronic', ['House', 'Techno', 'Lo-fi', 'DJ sets']],
    ['Classical', ['Piano', 'Orchestra', 'Opera']],
    ['Instruments', ['Guitar', 'Drums', 'Music theory', 'Gear reviews']],
  ]],
  ['News & politics', [
    ['World news', ['Europe', 'Asia', 'Americas', 'Africa']],
    ['Politics', ['Elections', 'Policy analysis', 'Activism']],
    ['Business news', ['Markets', 'Startups', 'Earnings', 'Economy']],
    ['Local news', ['City news', 'Weather', 'Traffic']],
    ['Media', ['Journalism', 'Fact checking', 'Newsletters', 'Opinion']],
  ]],
];

export function demoCategories(): CategoryRecord[] {
  const records: CategoryRecord[] = [];
  let level2Id = 100;
  let level3Id = 1000;
  tree.forEach(([name, children], index) => {
    const level1Id = index + 1;
    records.push({ id: level1Id, parent_id: null, name });
    for (const [childName, grandchildren] of children) {
      const childId = ++level2Id;
      records.push({ id: childId, parent_id: level1Id, name: childName });
      for (const grandchildName of grandchildren) records.push({ id: ++level3Id, parent_id: childId, name: grandchildName });
    }
  });
  return records;
}

/** The ids creators may carry: level 2 and level 3, the levels search accepts. */
export function assignableCategoryIds(categories: readonly CategoryRecord[]): number[] {
  return categories.filter((category) => category.parent_id !== null).map((category) => category.id);
}
