// TypeScript types of the REST answers, generated from openapi.json by openapi-typescript for the
// typed client (src/client/). `npm run openapi` writes them; test/openapi.test.ts fails when the
// committed file drifts from the document.
//   node scripts/openapi-types.mjs <openapi.json> <out.ts>
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const banner = '// Generated from openapi.json by scripts/openapi-types.mjs (npm run openapi). Do not edit.\n\n';

/** The generated module for an OpenAPI document given as JSON text. */
export async function openApiTypes(documentText) {
  const ast = await openapiTS(JSON.parse(documentText), { exportType: true, emptyObjectsUnknown: true });
  return banner + astToString(ast);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    process.stderr.write('usage: node scripts/openapi-types.mjs <openapi.json> <out.ts>\n');
    process.exit(2);
  }
  writeFileSync(output, await openApiTypes(readFileSync(input, 'utf8')));
}
