/** How many of the first `length` values of the ascending `values` are < value (where value would go). */
export function lowerBound(values: ArrayLike<number>, value: number, length = values.length): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
