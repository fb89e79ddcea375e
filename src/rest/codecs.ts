import { z } from 'zod';
import { ApiError, fieldErrorsFromZod, type FieldError } from '../errors.js';

// The REST wire format of an input is its zod schema with snake_case names; a few fields travel
// as integer codes (contract §4.1/4.2) and enums as lowercase strings. Decoding turns a REST body
// into the schema's own (GraphQL-shaped) values, so both front doors validate with one schema.

const integerCodes: Record<string, z.ZodType> = {
  gender: z.union([z.literal(0), z.literal(1), z.literal(2)]).transform((n) => (['UNKNOWN', 'MALE', 'FEMALE'] as const)[n]),
  // 0 or absent does not filter (decisions.md §2).
  hasEmail: z.union([z.literal(0), z.literal(1)]).transform((n) => n === 1),
  verified: z.union([z.literal(0), z.literal(1)]).transform((n) => n === 1),
  videoType: z.union([z.literal(1), z.literal(2)]).transform((n) => (n === 2 ? 'SHORT' : 'VIDEO')),
};

export const toSnake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const toCamel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema as z.ZodType & { unwrap?: () => z.ZodType };
  while (current.unwrap && ['optional', 'nullable'].includes(current._zod.def.type)) current = current.unwrap() as typeof current;
  return current;
}

function wireCodec(name: string, schema: z.ZodType): z.ZodType | undefined {
  if (integerCodes[name]) return integerCodes[name];
  const inner = unwrap(schema);
  if (inner._zod.def.type === 'enum') {
    const options = (inner as z.ZodEnum).options as string[];
    return z.enum(options.map((o) => o.toLowerCase()) as [string, ...string[]]).transform((v) => v.toUpperCase());
  }
  return undefined;
}

/** REST field name of a schema path (`filter.categoryIds` → `category_ids`, `locations.0` → `locations`). */
export function restFieldName(path: string): string {
  const named = path.split('.').filter((segment) => !/^\d+$/.test(segment));
  return toSnake(named.at(-1) ?? path);
}

export function restFieldErrors(fields: FieldError[]): FieldError[] {
  return fields.map((f) => ({ field: restFieldName(f.field), message: f.message }));
}

/**
 * Decodes a REST object (JSON body or query parameters) against a zod object schema: snake_case
 * names only, wire codecs applied, then the schema itself. Throws 400 naming every bad field.
 */
export function decodeRestInput(schema: z.ZodType & { shape: Record<string, z.ZodType> }, input: Record<string, unknown>) {
  const errors: FieldError[] = [];
  const decoded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const name = toCamel(key);
    const fieldSchema = schema.shape[name];
    if (toSnake(name) !== key || !fieldSchema) {
      errors.push({ field: key, message: 'unknown field' });
      continue;
    }
    const codec = value === null ? undefined : wireCodec(name, fieldSchema);
    if (!codec) {
      decoded[name] = value;
      continue;
    }
    const result = codec.safeParse(value);
    if (result.success) decoded[name] = result.data;
    else errors.push(...restFieldErrors(fieldErrorsFromZod(result.error, [name])));
  }
  if (errors.length > 0) throw ApiError.badRequest(errors);
  const result = schema.safeParse(decoded);
  if (!result.success) throw ApiError.badRequest(restFieldErrors(fieldErrorsFromZod(result.error)));
  return decoded;
}
