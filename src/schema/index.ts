import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './creators.js';
import './videos.js';
import './viewer.js';

export const schema = builder.toSchema();

/** The SDL committed as schema.graphql; a test fails when it drifts from the code. */
export function printSchemaSDL(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
