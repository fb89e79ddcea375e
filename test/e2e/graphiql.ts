import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it, onTestFailed } from 'vitest';
import { GRAPHIQL_DEFAULT_QUERY, GRAPHIQL_HEADERS } from '../../src/http/graphql.js';
import { browserTests, chromiumPath, hasChromium } from '../support/chromium.js';
import type { Served } from './served.js';

if (!hasChromium) console.warn(`GraphiQL browser test skipped: no Chromium at ${chromiumPath} (apt-get install chromium)`);

const screenshotPath = join(fileURLToPath(new URL('../../test-artifacts/', import.meta.url)), 'graphiql.png');
const query = '{ creators(first: 3, sortBy: FOLLOWER_COUNT) { totalCount nodes { userId username followerCount } } }';

/** A Monaco editor's text: each line is an absolutely placed `.view-line`, spaces are U+00A0. */
function editorText(editor: Locator): Promise<string> {
  return editor.locator('.view-lines').evaluate((lines) =>
    Array.from(lines.querySelectorAll<HTMLElement>('.view-line'))
      .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
      .map((line) => line.textContent ?? '')
      .join('\n')
      .replace(/\u00a0/g, ' '),
  );
}

/** Replaces a Monaco editor's content through the keyboard, as a person pasting would. */
async function replaceEditorText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(text);
  // Monaco closes brackets and quotes as they arrive: drop whatever it added after the text.
  await page.keyboard.press('ControlOrMeta+Shift+End');
  await page.keyboard.press('Delete');
  await page.keyboard.press('ControlOrMeta+Home');
  await expect.poll(() => editorText(editor)).toBe(text);
}

export function graphiqlPage(served: () => Served): void {
  describe('GraphiQL at /graphql in headless Chromium', { timeout: 180_000 }, () => {
    it.skipIf(!browserTests)(
      'loads from the server alone, documents creators, and runs a creators query that agrees with REST',
      async () => {
        const { server, browser } = served();
        const { url, key } = server;
        const page = browser!.context.pages()[0] ?? (await browser!.context.newPage());
        const saveScreenshot = async () => {
          mkdirSync(join(screenshotPath, '..'), { recursive: true });
          await page.screenshot({ path: screenshotPath });
          console.log(`GraphiQL screenshot: ${screenshotPath}`);
        };
        onTestFailed(saveScreenshot);

        await page.goto(`${url}/graphql`);
        // Checked at load for a clear failure (a CDN asset would otherwise leave an empty page), and again at the end.
        expect(browser!.outside).toEqual([]);

        // The explorer lists Query's fields only once GraphiQL's introspection query has succeeded.
        await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
        const docs = page.locator('.graphiql-doc-explorer');
        await docs.locator('a.graphiql-doc-explorer-type-name', { hasText: /^Query$/ }).click();
        await docs.locator('a.graphiql-doc-explorer-field-name', { hasText: /^creators$/ }).waitFor();

        // A first visit opens on our composed example and a template for the key, not yoga's welcome text.
        const queryEditor = page.locator('.graphiql-query-editor .monaco-editor');
        await expect.poll(() => editorText(queryEditor)).toBe(GRAPHIQL_DEFAULT_QUERY);
        await page.locator('.graphiql-editor-tools button[data-name="headers"]').click();
        const headersEditor = page.locator('section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden) .monaco-editor');
        await expect.poll(() => editorText(headersEditor)).toBe(GRAPHIQL_HEADERS);

        await replaceEditorText(page, queryEditor, query);
        await replaceEditorText(page, headersEditor, JSON.stringify({ Authorization: key }));

        const answered = page.waitForResponse(
          (response) => response.request().method() === 'POST' && (response.request().postData() ?? '').includes('creators('),
        );
        await page.getByRole('button', { name: /^Execute query/ }).click();
        expect((await answered).request().headers().authorization).toBe(key);

        const resultPane = page.locator('.graphiql-response .monaco-editor');
        await expect.poll(() => editorText(resultPane)).toMatch(/"(data|errors)"/);
        const shown = JSON.parse(await editorText(resultPane));
        await saveScreenshot();

        const rest = await fetch(`${url}/api/v1/search/twitter/user`, {
          method: 'POST',
          headers: { authorization: key, 'content-type': 'application/json' },
          body: JSON.stringify({ sort_by: 'follower_count', page_size: 3 }),
        });
        const restBody = (await rest.json()) as { data: { total: number; items: Array<{ user_id: string }> } };
        expect(rest.status).toBe(200);

        expect(shown.errors).toBeUndefined();
        const { totalCount, nodes } = shown.data.creators as { totalCount: number; nodes: Array<{ userId: string; followerCount: number }> };
        expect(totalCount).toBeGreaterThan(3);
        expect(totalCount).toBe(restBody.data.total);
        expect(nodes.map((node) => node.userId)).toEqual(restBody.data.items.map((item) => item.user_id));
        expect(nodes).toHaveLength(3);
        const followers = nodes.map((node) => node.followerCount);
        expect(followers).toEqual([...followers].sort((a, b) => b - a));

        expect(browser!.outside).toEqual([]);
        expect(browser!.fromServer()).toBeGreaterThan(0);
      },
    );
  });
}
