// The little JSON Schema (2020-12, OpenAPI 3.1's dialect) the REST routes need to describe what
// they answer; src/rest/openapi.ts assembles the document from it.

export type JsonSchema = { [keyword: string]: unknown };

/** The schema of a rendered object: every property is always present (null when it has no value). */
export interface ObjectSchema extends JsonSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  required: string[];
  additionalProperties: false;
}

export function objectSchema(properties: Record<string, JsonSchema>, description?: string): ObjectSchema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

export const describe = (schema: JsonSchema, description: string | null | undefined): JsonSchema =>
  description ? { ...schema, description } : schema;
