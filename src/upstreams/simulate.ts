import { startInstagramSimulator } from './instagram/simulator.js';
import type { SimulatorServer } from './simulator-server.js';
import { startTwitchSimulator } from './twitch/simulator.js';

export type SimulatorKind = 'twitch' | 'instagram';

/**
 * Starts one upstream simulator on 127.0.0.1 (port 0: any free port) and tells stderr where, with
 * the settings that point the service at it. It keeps the process alive until closed.
 */
export async function runSimulator(kind: SimulatorKind, port: number): Promise<SimulatorServer> {
  switch (kind) {
    case 'instagram': {
      const simulator = await startInstagramSimulator({ port });
      process.stderr.write(`instagram simulator listening on ${simulator.url}\nINSTAGRAM_UPSTREAM_URL=${simulator.url}\n`);
      return simulator;
    }
    case 'twitch': {
      const simulator = await startTwitchSimulator({ port });
      process.stderr.write(
        `twitch simulator listening on ${simulator.url}\n` +
          `TWITCH_API_URL=${simulator.url} TWITCH_CLIENT_ID=${simulator.clientId} TWITCH_TOKEN=${simulator.token}\n`,
      );
      return simulator;
    }
    default:
      // The CLI passes user input; the type alone does not keep other words out.
      throw new Error(`unknown simulator "${String(kind)}": expected twitch or instagram`);
  }
}
