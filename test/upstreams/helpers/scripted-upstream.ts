import { startSimulatorServer, type SimulatorServer } from '../../../src/upstreams/simulator-server.js';

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

/** An upstream that answers the given responses in order (500 once they run out), for shapes no simulator serves. */
export async function startScriptedUpstream(responses: ScriptedResponse[]): Promise<SimulatorServer> {
  const queue = [...responses];
  return startSimulatorServer((_request, response) => {
    const next = queue.shift() ?? { status: 500, body: '{}' };
    response.writeHead(next.status ?? 200, { 'content-type': 'application/json', ...next.headers });
    response.end(next.body);
  }, {});
}
