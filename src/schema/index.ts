import {
  GraphQLObjectType,
  GraphQLSchema,
  lexicographicSortSchema,
  printSchema,
  type GraphQLFieldConfigMap,
} from 'graphql';
import { isAdminField } from '../access/admin.js';
import { builder } from './builder.js';
import './admin.js';
import './categories.js';
import './creators.js';
import './live-streams.js';
import './medias.js';
import './node.js';
import './videos.js';
import './viewer.js';

/** Every field, administration included: served only when ADMIN_TOKEN is set. */
export const adminSchema = builder.toSchema();

function withoutAdministration(full: GraphQLSchema): GraphQLSchema {
  const config = full.toConfig();
  const queryConfig = full.getQueryType()!.toConfig();
  const query = new GraphQLObjectType({
    ...queryConfig,
    fields: Object.fromEntries(Object.entries(queryConfig.fields).filter(([name]) => !isAdminField(name))) as GraphQLFieldConfigMap<unknown, unknown>,
  });
  return new GraphQLSchema({
    ...config,
    query,
    mutation: null,
    types: config.types.filter((type) => !type.name.startsWith('Admin') && type.name !== 'Query' && type.name !== 'Mutation'),
  });
}

/** The public schema: what clients see without ADMIN_TOKEN, and what REST routes run on. */
export const schema = withoutAdministration(adminSchema);

/** The SDL committed as schema.graphql; a test fails when it drifts from the code. */
export function printSchemaSDL(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
