import SchemaBuilder from '@pothos/core';
import { GraphQLError, Kind } from 'graphql';
import { isoText } from '../domain/instant.js';
import type { Context } from './context.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    SafeInt: { Input: number; Output: number };
    Decimal: { Input: string; Output: string };
  };
}>({
  defaultFieldNullability: false,
});

builder.queryType({});

builder.scalarType('DateTime', {
  description: 'An instant, ISO 8601 in UTC with milliseconds (2026-05-01T12:34:56.000Z)',
  // Instants read from PostgreSQL print from their own text (src/domain/instant.ts).
  serialize: (value) => isoText(value),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
});

const isSafeInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

builder.scalarType('SafeInt', {
  description: 'A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number',
  serialize: (value) => value,
  parseValue: (value) => {
    if (!isSafeInteger(value)) throw new GraphQLError('SafeInt must be an integer up to 2^53 - 1');
    return value;
  },
  parseLiteral: (node) => {
    const value = node.kind === Kind.INT ? Number(node.value) : NaN;
    // The literal's node: validation then says where it is, and which argument (src/schema/errors.ts).
    if (!isSafeInteger(value)) throw new GraphQLError('SafeInt must be an integer up to 2^53 - 1', { nodes: node });
    return value;
  },
});

builder.scalarType('Decimal', {
  description: 'A decimal metric as a string with two decimals ("3.25"); rates and ratios are percentages',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value)) throw new GraphQLError('Decimal must be a decimal string');
    return value;
  },
});
