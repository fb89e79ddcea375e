import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Makes `change` (a key disabled, say) while a client asks `serverUrl` with `key` every 20 ms, so
 * the server's cache entry for the key is always fresh when the change lands. Returns how long
 * after `change` resolved the first answer with `status` came back (Infinity: none within 5 s),
 * and what `change` returned. Throws if the key already got `status` before the change.
 */
export async function timeKeyChange<T>(serverUrl: string, key: string, status: number, change: () => Promise<T>): Promise<{ ms: number; result: T }> {
  let stopped = false;
  const answers: { sentAt: number; doneAt: number; status: number }[] = [];
  const asking = (async () => {
    while (!stopped) {
      const sentAt = performance.now();
      const response = await fetch(`${serverUrl}/api/ping`, { headers: { authorization: key } });
      await response.arrayBuffer();
      answers.push({ sentAt, doneAt: performance.now(), status: response.status });
      await sleep(20);
    }
  })();
  try {
    while (answers.length === 0) await sleep(5);
    if (answers[0].status === status) throw new Error(`the key already got ${status} before the change`);
    const result = await change();
    const changed = performance.now();
    const seen = () => answers.find((answer) => answer.sentAt >= changed && answer.status === status);
    while (!seen() && performance.now() - changed < 5_000) await sleep(10);
    return { ms: (seen()?.doneAt ?? Infinity) - changed, result };
  } finally {
    stopped = true;
    await asking;
  }
}
