// Video durations are stored as whole seconds and shown as ISO 8601 durations ("PT4M13S").

export function formatDuration(totalSeconds: number): string {
  if (totalSeconds <= 0) return 'PT0S';
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return `PT${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds ? `${seconds}S` : ''}`;
}

const ISO_DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Whole seconds of an ISO 8601 duration with days, hours, minutes and seconds; null if not one. */
export function parseDuration(text: string): number | null {
  const match = ISO_DURATION.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return null;
  const [, days, hours, minutes, seconds] = match;
  return (
    Number(days ?? 0) * 86_400 + Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Math.round(Number(seconds ?? 0))
  );
}
