import {
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { toSnake } from './codecs.js';

// A GraphQL result rendered in the contract's REST shape: snake_case names, enum values in
// lowercase ("male", "short"). Walks the value beside its schema type, so it needs no field list.
export function renderRest(value: unknown, type: GraphQLOutputType): unknown {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return renderRest(value, type.ofType);
  if (isListType(type)) return (value as unknown[]).map((item) => renderRest(item, type.ofType));
  const named = getNamedType(type);
  if (isEnumType(named)) return String(value).toLowerCase();
  if (isObjectType(named)) {
    const fields = named.getFields();
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [toSnake(key), renderRest(item, fields[key].type)]),
    );
  }
  return value;
}
