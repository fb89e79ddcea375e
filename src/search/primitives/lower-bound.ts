/**
 * The first place in [from, length) of the ascending `values` holding `value` or more (length if
 * none): how many of the first `length` are < value, when every one before `from` is.
 */
export function lowerBound(values: ArrayLike<number>, value: number, length = values.length, from = 0): number {
  let lo = from;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
