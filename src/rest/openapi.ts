import {
  getNamedType,
  type GraphQLOutputType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { endpoints, type RestEndpointId } from '../access/endpoints.js';
import { type ErrorCode, statusOfCode } from '../domain/errors.js';
import { schema } from '../schema/index.js';
import { restInputSchema, toSnake } from './codecs.js';
import { describe, type JsonSchema, nullable, objectSchema, type ObjectSchema } from './json-schema.js';
import { type RestRoute, restRoutes } from './routes.js';

// The OpenAPI 3.1 document of the REST routes, built from what serves them: request bodies and
// parameters are the JSON Schema of each route's REST-level zod schema (src/rest/codecs.ts), items
// are the route's persisted GraphQL selection walked against the schema types, named and valued as
// src/rest/render.ts renders them, and `data` is shaped by the route's own dataSchema. `npm run openapi` writes it to
// openapi.json; the service serves it at /api/openapi.json.

const PING_PATH = '/api/ping';

interface Operation {
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  /** Error statuses the operation can answer, beyond 401, 429, 500 and 503 that every one can. */
  errors: ErrorCode[];
}

// What a reader needs to know beyond the shapes; the operation ids are the typed client's method names.
const operations: Record<RestEndpointId, Operation> = {
  'search.creators': {
    operationId: 'searchCreators',
    summary: 'Creator search (microblog platform)',
    description:
      'Filtered, paged search over creators. Every body field is optional; `sort_by` defaults to `relevance` with a non-empty `query`, else `follower_count`; every order is descending with `user_id` as the tie-break.',
    tag: 'Search',
    errors: ['BAD_REQUEST', 'FORBIDDEN'],
  },
  'search.videos': {
    operationId: 'searchVideos',
    summary: 'Video search (video platform)',
    description:
      "Filtered, paged search over videos; audience filters apply to the video's channel. Ordered by relevance with a non-empty `query`, else newest first.",
    tag: 'Search',
    errors: ['BAD_REQUEST', 'FORBIDDEN'],
  },
  'live.search': {
    operationId: 'searchLiveStreams',
    summary: 'Live-stream search (live-stream platform)',
    description:
      'Current live broadcasts from the latest collected snapshot, by viewer count descending. Page forward with `after` = a previous `data.offset`, back with `before`.',
    tag: 'Search',
    errors: ['BAD_REQUEST', 'FORBIDDEN'],
  },
  'realtime.medias': {
    operationId: 'realtimeMedias',
    summary: "A creator's latest posts, fetched live (photo platform)",
    description:
      'Fetches the newest posts of an account from the platform at request time. 404: the platform has no such public account; 500 `upstream unavailable`: the platform failed or timed out (retry with backoff).',
    tag: 'Realtime',
    errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  },
  ping: {
    operationId: 'ping',
    summary: 'Connectivity and key check',
    description: 'Checks the key; answers `pong` with the server time.',
    tag: 'Service',
    errors: [],
  },
};

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const scalars: Record<string, JsonSchema> = {
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  Int: { type: 'integer', minimum: -(2 ** 31), maximum: 2 ** 31 - 1 },
  Float: { type: 'number' },
  SafeInt: { type: 'integer', minimum: -MAX_SAFE, maximum: MAX_SAFE },
  Decimal: { type: 'string', pattern: '^-?\\d+\\.\\d{2}$' },
  DateTime: { type: 'string', format: 'date-time' },
};

const ref = (section: string, name: string) => ({ $ref: `#/components/${section}/${name}` });

/** Object types met below a route's root field: one component each, named after the GraphQL type. */
class ItemSchemas {
  readonly schemas: Record<string, JsonSchema> = {};

  /** The JSON Schema of a value of `type` with `selection`, as src/rest/render.ts renders it. */
  value(type: GraphQLOutputType, selection: SelectionSetNode | undefined): JsonSchema {
    return isNonNullType(type) ? this.nonNull(type.ofType, selection) : nullable(this.nonNull(type, selection));
  }

  /** The schema of a value of `type` that is there (whether null is allowed is value()'s call). */
  private nonNull(type: GraphQLOutputType, selection: SelectionSetNode | undefined): JsonSchema {
    if (isNonNullType(type)) return this.nonNull(type.ofType, selection);
    if (isListType(type)) return { type: 'array', items: this.value(type.ofType, selection) };
    const named = getNamedType(type);
    if (isEnumType(named)) {
      return describe({ type: 'string', enum: named.getValues().map((v) => v.name.toLowerCase()) }, named.description);
    }
    if (isScalarType(named)) {
      const scalar = scalars[named.name];
      if (!scalar) throw new Error(`openapi: no JSON Schema for the GraphQL scalar ${named.name}`);
      return isSpecifiedScalarType(named) ? scalar : describe(scalar, named.description);
    }
    if (isObjectType(named)) {
      const object = this.object(named, selection);
      const existing = this.schemas[named.name];
      if (existing && JSON.stringify(existing) !== JSON.stringify(object)) {
        throw new Error(`openapi: ${named.name} is selected two ways; give one selection a component name of its own`);
      }
      this.schemas[named.name] = object;
      return ref('schemas', named.name);
    }
    throw new Error(`openapi: cannot describe the GraphQL type ${String(named)}`);
  }

  /** An object's selected fields under their rendered (snake_case) names. */
  object(type: GraphQLOutputType, selection: SelectionSetNode | undefined): ObjectSchema {
    const named = getNamedType(type);
    if (!isObjectType(named) || !selection) throw new Error(`openapi: ${String(named)} needs a selection`);
    const fields = named.getFields();
    const properties: Record<string, JsonSchema> = {};
    for (const node of selection.selections) {
      if (node.kind !== Kind.FIELD) throw new Error('openapi: REST selections name their fields (no fragments)');
      const field = fields[node.name.value];
      if (!field) throw new Error(`openapi: ${named.name} has no field ${node.name.value}`);
      properties[toSnake((node.alias ?? node.name).value)] = describe(this.value(field.type, node.selectionSet), field.description);
    }
    return objectSchema(properties, named.description ?? undefined);
  }
}

interface ErrorResponse {
  name: string;
  description: string;
  /** The caller is known by then, so the answer carries X-Quota-Remaining and X-Quota-Cost. */
  identified: boolean;
  retryAfter: boolean;
}

const errorResponses: Record<number, ErrorResponse> = {
  400: {
    name: 'BadRequest',
    description:
      'The body or a parameter cannot be accepted (malformed JSON, wrong Content-Type, a wrong type or format, an unknown field, a value out of range). `errors` names every bad field. Fix the request; do not retry it as is.',
    identified: true,
    retryAfter: false,
  },
  401: {
    name: 'Unauthorized',
    description:
      'No valid key: the Authorization header is missing, carries a `Bearer` prefix or whitespace, or the key is unknown, disabled, rotated out or deleted.',
    identified: false,
    retryAfter: false,
  },
  403: {
    name: 'Forbidden',
    description: 'The key is valid but its plan does not include the endpoint, its subscription has ended, or its quota is used up.',
    identified: true,
    retryAfter: false,
  },
  404: {
    name: 'NotFound',
    description: 'The platform has no such public account.',
    identified: true,
    retryAfter: false,
  },
  429: {
    name: 'TooManyRequests',
    description: "The plan's rate or concurrent-request limit is exceeded. Wait `Retry-After` seconds, then retry.",
    identified: true,
    retryAfter: true,
  },
  500: {
    name: 'InternalServerError',
    description: 'An upstream platform failed or timed out (`upstream unavailable`), or an unexpected error. Retryable with backoff.',
    identified: true,
    retryAfter: false,
  },
  503: {
    name: 'ServiceUnavailable',
    description: 'The database is unreachable or the server is shutting down. Retry after `Retry-After` seconds.',
    identified: true,
    retryAfter: true,
  },
};

/** Statuses every authenticated operation can answer. */
const commonErrorStatuses = [401, 429, 500, 503];

const headers = {
  'X-Request-Id': {
    description: "The request's id: the caller's own `X-Request-Id` when it is 1 to 64 of `A-Za-z0-9._:-`, else a new one. Quote it when reporting a problem.",
    required: true,
    schema: { type: 'string' },
  },
  'X-Quota-Remaining': {
    description: 'Quota units left on the account, on every answer to an identified key.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Quota-Cost': {
    description: "Quota units this request was charged: the operation's cost on success, 0 otherwise; on every answer to an identified key.",
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Whole seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
};

const fieldError = objectSchema({
  field: { type: 'string', description: 'The REST name of the field (`follower_count_min`), `body` or `Content-Type`' },
  message: { type: 'string' },
});

const errorEnvelope: JsonSchema = {
  ...objectSchema(
    {
      success: { type: 'boolean', const: false },
      code: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status' },
      message: { type: 'string', description: 'A short explanation; `Bad Request` for a 400' },
      errors: { type: 'array', items: ref('schemas', 'FieldError'), description: 'On a 400: every bad field' },
    },
    'The error envelope of every REST answer that is not a success',
  ),
  required: ['success', 'code', 'message'],
};

function successEnvelope(data: JsonSchema, message: string): ObjectSchema {
  return objectSchema({
    success: { type: 'boolean', const: true },
    code: { type: 'integer', const: 200 },
    message: { type: 'string', const: message },
    data,
  });
}

/** JSON Schema of a REST input as the wire takes it (snake_case names, integer codes, lowercase enums). */
function inputSchema(route: RestRoute): ObjectSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(restInputSchema(route.input), { io: 'input', unrepresentable: 'throw' });
  return json as unknown as ObjectSchema;
}

/** A query parameter is a string or absent, never JSON null. */
function withoutNull(schema: JsonSchema): JsonSchema {
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  if (anyOf) {
    const rest = anyOf.filter((option) => option.type !== 'null');
    return rest.length === 1 ? rest[0] : { ...schema, anyOf: rest };
  }
  if (Array.isArray(schema.type)) return { ...schema, type: schema.type.filter((t) => t !== 'null') };
  return schema;
}

function queryParameters(route: RestRoute) {
  const json = inputSchema(route);
  return Object.entries(json.properties).map(([name, { description, ...property }]) => ({
    name,
    in: 'query',
    required: (json.required ?? []).includes(name),
    ...(description ? { description } : {}),
    schema: withoutNull(property),
  }));
}

/** The JSON Schema of the route's root field as src/rest/render.ts renders it; nested objects become components. */
function rootSchema(route: RestRoute, items: ItemSchemas): ObjectSchema {
  const operation = route.document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const [root] = operation?.selectionSet.selections ?? [];
  if (root?.kind !== Kind.FIELD) throw new Error(`openapi: ${route.path} has no root field`);
  const field = schema.getQueryType()!.getFields()[root.name.value];
  return items.object(field.type, root.selectionSet);
}

const pascal = (name: string) => name[0].toUpperCase() + name.slice(1);

function operationObject(endpoint: RestEndpointId, success: JsonSchema, input: Record<string, unknown>) {
  const operation = operations[endpoint];
  const cost = endpoints[endpoint].cost;
  const quota = cost === 0 ? 'Free: costs no quota units.' : `Costs ${cost} quota unit${cost === 1 ? '' : 's'} per successful request; failures cost nothing.`;
  const statuses = [...new Set([...operation.errors.map(statusOfCode), ...commonErrorStatuses])].sort((a, b) => a - b);
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    description: `${operation.description}\n\n${quota}`,
    tags: [operation.tag],
    'x-quota-cost': cost,
    ...input,
    responses: {
      200: {
        description: 'Success',
        headers: {
          'X-Request-Id': ref('headers', 'X-Request-Id'),
          'X-Quota-Remaining': ref('headers', 'X-Quota-Remaining'),
          'X-Quota-Cost': ref('headers', 'X-Quota-Cost'),
        },
        content: { 'application/json': { schema: success } },
      },
      ...Object.fromEntries(statuses.map((status) => [status, ref('responses', errorResponses[status].name)])),
    },
  };
}

function readPackageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

const description = `Creator, video and live-stream search, and a realtime media fetch, over one metered pipeline.

**Authentication.** Every request carries \`Authorization: <API key>\`: the raw key, with no \`Bearer\` prefix and no whitespace (either is a 401).

**Envelopes.** A success is \`{"success": true, "code": 200, "message": "success", "data": …}\`; an error is \`{"success": false, "code": <status>, "message": "…"}\`, and a 400 adds \`errors: [{field, message}]\` naming every bad field. A path or method not listed here answers 404 in the error envelope.

**Quota.** Each operation states its cost (also as \`x-quota-cost\`); only successful requests are charged, and every answer to an identified key carries \`X-Quota-Remaining\` and \`X-Quota-Cost\` (the units this request was charged).

**Retries.** 4xx answers need the request fixed, except 429: wait \`Retry-After\` seconds. 500 and 503 are retryable: wait 1 second, then double the wait after each failure, up to 32 seconds (503 also sends \`Retry-After\`).

The same data is available through GraphQL at \`/graphql\`.`;

/** The schemas `roots` refer to, directly or through each other (a root's unselected parts, such as PageInfo, drop out). */
function referencedSchemas(roots: unknown, all: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const kept = new Set<string>();
  const visit = (value: unknown) => {
    for (const [, name] of JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (kept.has(name)) continue;
      kept.add(name);
      visit(all[name]);
    }
  };
  visit(roots);
  return Object.fromEntries(Object.entries(all).filter(([name]) => kept.has(name)));
}

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

export function buildOpenApiDocument(): OpenApiDocument {
  const items = new ItemSchemas();
  const schemas: Record<string, JsonSchema> = {};
  const paths: OpenApiDocument['paths'] = {};
  const addOperation = (path: string, method: string, endpoint: RestEndpointId, data: JsonSchema, message: string, input: Record<string, unknown>) => {
    const name = `${pascal(operations[endpoint].operationId)}Response`;
    schemas[name] = successEnvelope(data, message);
    paths[path] = { ...paths[path], [method]: operationObject(endpoint, ref('schemas', name), input) };
  };

  for (const route of restRoutes) {
    const input =
      route.method === 'GET'
        ? { parameters: queryParameters(route) }
        : { requestBody: { required: false, content: { 'application/json': { schema: inputSchema(route) } } } };
    addOperation(route.path, route.method.toLowerCase(), route.endpoint, route.dataSchema(rootSchema(route, items)), 'success', input);
  }
  // src/http/rest.ts answers ping itself: `{ time }`, message "pong".
  addOperation(PING_PATH, 'get', 'ping', objectSchema({ time: { type: 'string', format: 'date-time', description: 'The server time' } }), 'pong', {});

  const responses = Object.fromEntries(
    Object.entries(errorResponses).map(([status, response]) => [
      response.name,
      {
        description: response.description,
        headers: {
          'X-Request-Id': ref('headers', 'X-Request-Id'),
          ...(response.identified ? { 'X-Quota-Remaining': ref('headers', 'X-Quota-Remaining'), 'X-Quota-Cost': ref('headers', 'X-Quota-Cost') } : {}),
          ...(response.retryAfter ? { 'Retry-After': ref('headers', 'Retry-After') } : {}),
        },
        content: {
          'application/json': {
            schema: { allOf: [ref('schemas', 'ErrorEnvelope'), { properties: { code: { const: Number(status) } } }] },
          },
        },
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: { title: 'creator-data-service', version: readPackageVersion(), description },
    security: [{ ApiKey: [] }],
    tags: [
      { name: 'Search', description: 'Database searches' },
      { name: 'Realtime', description: 'Fetched from the platform at request time' },
      { name: 'Service', description: 'The service itself' },
    ],
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The raw API key: no `Bearer` prefix, no whitespace.' },
      },
      headers,
      responses,
      schemas: referencedSchemas({ paths, responses }, { ...schemas, ...items.schemas, ErrorEnvelope: errorEnvelope, FieldError: fieldError }),
    },
  };
}

let cachedText: string | undefined;

/** The document as served and committed (openapi.json), built once per process. */
export function openApiJson(): string {
  cachedText ??= `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
  return cachedText;
}
