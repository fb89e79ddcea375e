import { runSimulator, type SimulatorKind } from '../upstreams/simulate.js';
import { flags } from './main.js';
import { usageLine } from './usage.js';
const kinds: readonly SimulatorKind[] = ['twitch', 'instagram'];

/**
 * `simulate <twitch|instagram> [--port N]`: serves one upstream simulator on 127.0.0.1 (port 0 or
 * absent: any free port, printed on stderr with the variables to use) until SIGINT/SIGTERM.
 */
export async function simulateCommand(args: string[]): Promise<number> {
  const { values, positionals } = flags(args, { port: { type: 'string' } }, usageLine('simulate'));
  const kind = positionals[0] as SimulatorKind | undefined;
  if (positionals.length !== 1 || !kind || !kinds.includes(kind)) {
    process.stderr.write(`creator-data simulate: name one simulator, twitch or instagram (usage: ${usageLine('simulate')})\n`);
    return 2;
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!/^\d+$/.test(values.port ?? '0') || !Number.isInteger(port) || port > 65_535) {
    process.stderr.write(`creator-data simulate: --port must be a port number from 0 to 65535 (usage: ${usageLine('simulate')})\n`);
    return 2;
  }
  const simulator = await runSimulator(kind, port);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await simulator.close();
  return 0;
}
