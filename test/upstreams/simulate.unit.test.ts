import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSimulator, type SimulatorKind } from '../../src/upstreams/simulate.js';
import { INSTAGRAM_SIM_USERS } from '../../src/upstreams/instagram/simulator.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function captureStderr(): () => string {
  const written: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  return () => written.join('');
}

describe('runSimulator', () => {
  it('starts the instagram simulator and logs its URL to stderr', async () => {
    const stderr = captureStderr();
    const simulator = await runSimulator('instagram', 0);
    try {
      expect(stderr()).toContain(`INSTAGRAM_UPSTREAM_URL=${simulator.url}`);
      const response = await fetch(`${simulator.url}/api/v1/feed/user/${INSTAGRAM_SIM_USERS.standard}/`);
      expect(response.status).toBe(200);
    } finally {
      await simulator.close();
    }
  });

  it('starts the twitch simulator and logs its URL and the credentials it accepts', async () => {
    const stderr = captureStderr();
    const simulator = await runSimulator('twitch', 0);
    try {
      const settings = Object.fromEntries([...stderr().matchAll(/(TWITCH_\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
      expect(settings.TWITCH_API_URL).toBe(simulator.url);
      const response = await fetch(`${simulator.url}/helix/streams?first=100`, {
        headers: { 'Client-Id': settings.TWITCH_CLIENT_ID, Authorization: `Bearer ${settings.TWITCH_TOKEN}` },
      });
      expect(response.status).toBe(200);
    } finally {
      await simulator.close();
    }
  });

  it('rejects an unknown kind', async () => {
    await expect(runSimulator('youtube' as SimulatorKind, 0)).rejects.toThrow(/expected twitch or instagram/);
  });
});
