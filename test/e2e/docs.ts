import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFailed } from 'vitest';
import { browserTests, chromiumPath, hasChromium } from '../support/chromium.js';
import type { Served } from './served.js';

// The /docs page in a real browser on a closed network: Swagger UI from the service alone lists
// every documented operation, and its "Try it out" sends the raw key and gets a real answer.

if (!hasChromium) console.warn(`/docs browser test skipped: no Chromium at ${chromiumPath} (apt-get install chromium)`);
const screenshotPath = join(fileURLToPath(new URL('../../test-artifacts/', import.meta.url)), 'docs.png');

export function docsPage(served: () => Served): void {
  describe('/docs in headless Chromium', { timeout: 180_000 }, () => {
    it.skipIf(!browserTests)('renders every operation from /api/openapi.json and runs a creator search with the raw key', async () => {
      const { server, browser } = served();
      const { url, key } = server;
      const page = browser!.context.pages()[0] ?? (await browser!.context.newPage());
      const saveScreenshot = async () => {
        mkdirSync(join(screenshotPath, '..'), { recursive: true });
        await page.screenshot({ path: screenshotPath, fullPage: true });
        console.log(`/docs screenshot: ${screenshotPath}`);
      };
      onTestFailed(saveScreenshot);

      await page.goto(`${url}/docs`);
      const paths = page.locator('.opblock-summary-path');
      await expect.poll(() => paths.count(), { timeout: 30_000 }).toBe(5);
      expect((await paths.allInnerTexts()).map((text) => text.replace(/\u200b/g, '').trim()).sort()).toEqual(
        ['/api/ping', '/api/v1/instagram/realtime/user/medias', '/api/v1/search/twitter/user', '/api/v1/search/youtube/video', '/api/v1/twitch/search/live'].sort(),
      );
      expect(browser!.outside).toEqual([]);

      await page.locator('button.authorize').first().click();
      await page.locator('.auth-container input').fill(key);
      await page.locator('.auth-btn-wrapper button.authorize').click();
      await page.locator('.auth-btn-wrapper button.btn-done').click();

      const operation = page.locator('#operations-Search-searchCreators');
      await operation.locator('.opblock-summary').click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('textarea.body-param__text').fill(JSON.stringify({ sort_by: 'follower_count', page_size: 2 }));
      const answered = page.waitForResponse((response) => response.url().endsWith('/api/v1/search/twitter/user') && response.request().method() === 'POST');
      await operation.locator('button.execute').click();
      const response = await answered;
      expect(response.request().headers().authorization).toBe(key);
      expect(response.status()).toBe(200);
      const body = (await response.json()) as { success: boolean; data: { items: unknown[] } };
      expect(body.success).toBe(true);
      expect(body.data.items).toHaveLength(2);
      await expect.poll(() => operation.locator('.live-responses-table tbody .response-col_status').first().innerText()).toContain('200');
      await saveScreenshot();

      expect(browser!.outside).toEqual([]);
      expect(browser!.fromServer()).toBeGreaterThan(3);
    });
  });
}
