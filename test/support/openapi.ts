import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

// Checks a live answer against openapi.json: the body against the documented response schema of
// its status (JSON Schema 2020-12, formats included), the headers against the documented headers.

type Json = Record<string, any>;
export const committedDocument: Json = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));

const addFormats = formats as unknown as (ajv: Ajv2020) => void;
const DOC_ID = 'https://creator-data.test/openapi.json';
const pointer = (...segments: string[]) => segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

export function createResponseChecker(document: Json = committedDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: DOC_ID });
  const resolve = (object: Json): { value: Json; at: string } => {
    if (typeof object.$ref !== 'string') throw new Error('resolve only follows $ref objects');
    const path = (object.$ref as string).slice(2).split('/');
    return { value: path.reduce((node: Json, key) => node[key.replaceAll('~1', '/').replaceAll('~0', '~')], document), at: object.$ref.slice(1) };
  };

  /** The problems of an answer to `method path`; empty when it is what the document says. */
  return function check(path: string, method: string, answer: { status: number; body: unknown; headers: Headers }): string[] {
    const operation = document.paths[path]?.[method.toLowerCase()];
    if (!operation) return [`${method} ${path} is not documented`];
    let response = operation.responses[String(answer.status)];
    if (!response) return [`${method} ${path} does not document status ${answer.status}`];
    let at = `/${pointer('paths', path, method.toLowerCase(), 'responses', String(answer.status))}`;
    if (response.$ref) ({ value: response, at } = resolve(response));
    const problems: string[] = [];
    const validate = ajv.getSchema(`${DOC_ID}#${at}/${pointer('content', 'application/json', 'schema')}`)!;
    if (!validate(answer.body)) problems.push(...(validate.errors ?? []).map((e) => `body${e.instancePath}: ${e.message} ${JSON.stringify(e.params)}`));
    for (const [name, declared] of Object.entries<Json>(response.headers ?? {})) {
      const header = declared.$ref ? resolve(declared).value : declared;
      const value = answer.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`header ${name} is missing`);
        continue;
      }
      const typed = header.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      if (!ajv.validate(header.schema, typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText()}`);
    }
    return problems;
  };
}
