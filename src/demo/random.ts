import { seededRandom, type SeededRandom } from '../upstreams/seeded-random.js';

// Demo and benchmark data never read the clock or Math.random: every record is a pure function of
// its seed, and "now" is this fixed reference date.
export const DEMO_REFERENCE_DATE = new Date('2026-11-01T00:00:00.000Z');
export const DAY_MS = 86_400_000;

/** Methods on a prototype rather than closures per instance: the benchmark seeding makes millions. */
export class DemoRandom implements SeededRandom {
  readonly next: () => number;

  constructor(seed: string) {
    this.next = seededRandom(seed).next;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** Spread evenly over orders of magnitude: most values small, a few very large. */
  logUniform(min: number, max: number): number {
    return 10 ** this.float(Math.log10(min), Math.log10(max));
  }

  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    let point = this.next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
    for (const [value, weight] of entries) {
      point -= weight;
      if (point < 0) return value;
    }
    return entries[entries.length - 1][0];
  }

  /** `count` of the distinct `items` (all of them if there are fewer), in the order drawn. */
  sample<T>(items: readonly T[], count: number): T[] {
    const picked = new Set<T>();
    const wanted = Math.min(count, items.length);
    while (picked.size < wanted) picked.add(this.pick(items));
    return [...picked];
  }

  chars(alphabet: string, length: number): string {
    let text = '';
    for (let i = 0; i < length; i++) text += alphabet[this.int(0, alphabet.length - 1)];
    return text;
  }
}

export const demoRandom = (seed: string) => new DemoRandom(seed);

export const round2 = (value: number) => Math.round(value * 100) / 100;

/** Two significant digits (48,213 → 48,000): real counts cluster on round numbers, and sorts meet ties. */
export function roundCount(value: number): number {
  if (value < 100) return Math.round(value);
  const unit = 10 ** (Math.floor(Math.log10(value)) - 1);
  return Math.round(value / unit) * unit;
}

/** A fifth of counts are round (48,000), as they are on the platforms; the rest exact. */
export function roundOften(rng: DemoRandom, value: number): number {
  return rng.chance(0.2) ? roundCount(value) : Math.round(value);
}

export const isoBefore = (milliseconds: number) => isoInstant(DEMO_REFERENCE_DATE.getTime() - milliseconds);

/** Past the last millisecond of year 9999, toISOString() writes six-digit years. */
const FOUR_DIGIT_YEARS_END_MS = 253_402_300_800_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));
const dayPrefixes = new Map<number, string>();

/**
 * `new Date(ms).toISOString()`, several times faster: it was a fifth of the seed's CPU in Node
 * (three timestamps a creator). Each day's "YYYY-MM-DDT" is made once by toISOString itself;
 * the time of day is integer arithmetic.
 */
export function isoInstant(ms: number): string {
  if (!(ms >= 0 && ms < FOUR_DIGIT_YEARS_END_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 100_000) dayPrefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  const inDay = ms - day * DAY_MS;
  const milliseconds = inDay % 1000;
  const seconds = Math.floor(inDay / 1000);
  return `${prefix}${TWO_DIGITS[Math.floor(seconds / 3600)]}:${TWO_DIGITS[Math.floor(seconds / 60) % 60]}:${TWO_DIGITS[seconds % 60]}.${THREE_DIGITS[milliseconds]}Z`;
}
