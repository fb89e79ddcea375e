// Filter bounds arrive as JS numbers; PostgreSQL compares them as the decimal String(n) spells
// (the driver sends numbers that way). Metrics are kept in whole cents, so a bound becomes cents
// exactly, rounded the way the comparison needs: `value >= 0.125` is `cents >= 13`.

function decimalParts(value: number): { digits: bigint; exponent: number } {
  const [mantissa, exp = '0'] = String(value).toLowerCase().split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  return { digits: BigInt(whole + fraction), exponent: Number(exp) - fraction.length };
}

function cents(value: number, round: 'floor' | 'ceil'): number {
  const { digits, exponent } = decimalParts(value);
  const shift = exponent + 2;
  if (shift >= 0) return Number(digits * 10n ** BigInt(shift));
  const divisor = 10n ** BigInt(-shift);
  const quotient = digits / divisor;
  // Bounds are non-negative: truncation is the floor, and a remainder makes the ceiling one more.
  return Number(round === 'ceil' && digits % divisor !== 0n ? quotient + 1n : quotient);
}

/** The fewest whole cents that are >= value. */
export const centsAtLeast = (value: number): number => cents(value, 'ceil');
/** The most whole cents that are <= value. */
export const centsAtMost = (value: number): number => cents(value, 'floor');

/** Cents as the two-decimal string numeric(20,2) prints ("3.25"), for cursors. */
export function decimalOfCents(value: number): string {
  const whole = Math.trunc(value / 100);
  const rest = Math.abs(value % 100);
  return `${value < 0 && whole === 0 ? '-' : ''}${whole}.${String(rest).padStart(2, '0')}`;
}

/** A cursor's decimal value (a string or a number) as cents; a hand-made cursor may fall between two. */
export function centsOfDecimal(value: string | number): number {
  const [whole, fraction = ''] = String(value).split('.');
  // Whole cents in integer arithmetic (0.07 * 100 is 7.000000000000001); digits past the second only
  // come in hand-made cursors, and put the key between two cents.
  const beyond = fraction.length > 2 ? Number(`0.${fraction.slice(2)}`) : 0;
  const magnitude = Number(whole.replace('-', '')) * 100 + Number(fraction.slice(0, 2).padEnd(2, '0')) + beyond;
  return whole.startsWith('-') ? -magnitude : magnitude;
}
