import { z } from 'zod';
import type { Config } from '../config.js';
import { describeFields, fieldErrorsFromZod } from '../domain/errors.js';
import { flags, UsageError, wholeNumber } from './main.js';
import { seedDemo, seedScale } from './seed.js';
import { withStore } from './store.js';
import { usageLine } from './usage.js';

// The counts arrive as numbers (wholeNumber refused any other text, naming its flag).
const count = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
const scaleFlags = z.strictObject({ creators: count.default(0), videos: count.default(0), channels: count.default(0), live: count.default(0) });

/** `seed --demo`, or `seed --creators N --videos N --channels N --live N` (benchmark scale). */
export async function seedCommand(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = flags(args, {
    demo: { type: 'boolean' },
    creators: { type: 'string' },
    videos: { type: 'string' },
    channels: { type: 'string' },
    live: { type: 'string' },
  }, usageLine('seed'));
  const { demo, ...scale } = values;
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])} (usage: ${usageLine('seed')})`);
  if (demo && Object.keys(scale).length > 0) throw new UsageError('seed --demo takes no counts');
  if (!demo && Object.keys(scale).length === 0) throw new UsageError(`name what to seed (usage: ${usageLine('seed')})`);
  const counts = Object.fromEntries(Object.entries(scale).map(([name, text]) => [name, wholeNumber(`--${name}`, text as string, 'a whole number, 0 or more')]));
  const parsed = scaleFlags.safeParse(counts);
  if (!parsed.success) throw new UsageError(describeFields(fieldErrorsFromZod(parsed.error).map((f) => ({ ...f, field: `--${f.field}` }))));
  return withStore(config, async (store) => {
    if (demo) await seedDemo(store.db, process.stderr);
    else {
      await seedScale(store, parsed.data, process.stderr).catch((error) => {
        // seedScale's own checks on the counts (videos need channels, …) are usage errors.
        throw error instanceof RangeError ? new UsageError(error.message) : error;
      });
    }
    return 0;
  });
}
