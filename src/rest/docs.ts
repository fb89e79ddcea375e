import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { openApiJson } from './openapi.js';
import { Response } from './envelope.js';

// The published API description, with no key and no quota: the OpenAPI document at
// /api/openapi.json and a reference page at /docs. The page is Swagger UI from the swagger-ui-dist
// package, served by the service itself (no CDN), told to call no validator service.

export const OPENAPI_PATH = '/api/openapi.json';
const DOCS_PATH = '/docs';

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files of the package the page loads; nothing else under /docs/ is served. */
const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const assetCache = new Map<string, Buffer>();

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>creator-data-service API reference</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: '${OPENAPI_PATH}',
      dom_id: '#swagger-ui',
      deepLinking: true,
      // The default sends the document to validator.swagger.io for a badge.
      validatorUrl: null,
    });
  </script>
</body>
</html>
`;

/** The answer for /api/openapi.json, /docs and its assets; null for any other request. */
export function serveApiDescription(request: Request, url: URL): Response | null {
  if (request.method !== 'GET' && request.method !== 'HEAD') return null;
  const path = url.pathname;
  if (path === OPENAPI_PATH) return new Response(openApiJson(), { headers: { 'content-type': 'application/json; charset=utf-8' } });
  if (path === DOCS_PATH || path === `${DOCS_PATH}/`) return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } });
  const asset = path.startsWith(`${DOCS_PATH}/`) ? path.slice(DOCS_PATH.length + 1) : '';
  if (!Object.hasOwn(assets, asset)) return null;
  let body = assetCache.get(asset);
  if (!body) {
    body = readFileSync(join(swaggerUiDir, asset));
    assetCache.set(asset, body);
  }
  return new Response(new Uint8Array(body), { headers: { 'content-type': assets[asset], 'cache-control': 'public, max-age=3600' } });
}
