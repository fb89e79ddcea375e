import { z } from 'zod';
import { ApiError, type FieldError, fieldErrorsFromZod, onePerField } from '../domain/errors.js';

// The REST wire format of an input is its zod schema with snake_case names; a few fields travel
// as integer codes (contract §4.1/4.2) and enums as lowercase strings. `restInputSchema` states
// that wire format as one zod schema per input: decoding parses with it (and its last step is the
// input's own schema, so both front doors validate alike), and the OpenAPI document is its
// JSON Schema (src/rest/openapi.ts).

// JSON Schema would call a number literal a `number`; the codes are integers.
const integerCode = <const Codes extends number[]>(codes: Codes, description: string) =>
  z.literal(codes).meta({ type: 'integer', description });

const integerCodes = {
  gender: integerCode([0, 1, 2], '0 = unknown, 1 = male, 2 = female').transform((n) => (['UNKNOWN', 'MALE', 'FEMALE'] as const)[n]),
  // 0 or absent does not filter (docs/contract/decisions.md §2).
  hasEmail: integerCode([0, 1], '1 = only creators with contact details; 0 or absent does not filter').transform((n) => n === 1),
  verified: integerCode([0, 1], '1 = only verified creators; 0 or absent does not filter').transform((n) => n === 1),
  videoType: integerCode([1, 2], '1 = video, 2 = short').transform((n) => (n === 2 ? 'SHORT' : 'VIDEO')),
};
type IntegerCodes = typeof integerCodes;

export const toSnake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const toCamel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** `followerCountMin` → `follower_count_min`, as toSnake does at run time. */
export type Snake<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${Snake<Rest>}`
  : S;

type Absent<V> = Extract<V, null | undefined>;
/** A field's value on the wire: its integer code, or an enum's values in lowercase. */
type WireValue<K, V> = K extends keyof IntegerCodes
  ? z.input<IntegerCodes[K]> | Absent<V>
  : V extends string
    ? string extends V
      ? V
      : Lowercase<V>
    : V;

/** The REST shape of an input whose schema-side (camelCase) shape is T. */
export type RestShape<T> = { [K in keyof T as K extends string ? Snake<K> : never]: WireValue<K, T[K]> };

/** A REST-level schema: takes the wire shape, yields the input schema's own (camelCase) values. */
export type RestInputSchema<S extends z.ZodType> = z.ZodType<z.output<S>, RestShape<z.input<S>>>;

type Wrapper = 'optional' | 'nullable';

function wrappersOf(schema: z.ZodType): { inner: z.ZodType; wrappers: Wrapper[] } {
  const wrappers: Wrapper[] = [];
  let current = schema as z.ZodType & { unwrap?: () => z.ZodType };
  while (current.unwrap && (current._zod.def.type === 'optional' || current._zod.def.type === 'nullable')) {
    wrappers.push(current._zod.def.type);
    current = current.unwrap() as typeof current;
  }
  return { inner: current, wrappers };
}

/** The wire schema of one field: the field's own schema, or its codec wrapped as the field is. */
function wireField(name: string, schema: z.ZodType): z.ZodType {
  const { inner, wrappers } = wrappersOf(schema);
  let codec: z.ZodType;
  if (Object.hasOwn(integerCodes, name)) {
    codec = integerCodes[name as keyof IntegerCodes];
  } else if (inner._zod.def.type === 'enum') {
    const options = (inner as z.ZodEnum).options as string[];
    // The schema's description names the values as GraphQL spells them; the wire spells them lowercase.
    const description = (schema.description ?? inner.description ?? '').replace(new RegExp(`\\b(${options.join('|')})\\b`, 'g'), (value) =>
      value.toLowerCase(),
    );
    codec = z
      .enum(options.map((o) => o.toLowerCase()) as [string, ...string[]])
      .describe(description)
      .transform((v) => v.toUpperCase());
  } else {
    return schema;
  }
  for (const wrapper of wrappers.reverse()) codec = wrapper === 'optional' ? codec.optional() : codec.nullable();
  return codec;
}

const restSchemas = new WeakMap<z.ZodType, z.ZodType>();

/**
 * The REST wire schema of a zod object input: snake_case names only (a camelCase name is an
 * unknown field), wire codecs per field, then the input's own schema for its cross-field rules.
 */
export function restInputSchema<S extends z.ZodType & { shape: Record<string, z.ZodType> }>(schema: S): RestInputSchema<S> {
  let wire = restSchemas.get(schema);
  if (!wire) {
    const shape = Object.fromEntries(Object.entries(schema.shape).map(([name, field]) => [toSnake(name), wireField(name, field)]));
    wire = z
      .strictObject(shape)
      .transform((value) => Object.fromEntries(Object.entries(value).map(([key, item]) => [toCamel(key), item])))
      .pipe(schema as z.ZodType as z.ZodType<unknown, Record<string, unknown>>);
    restSchemas.set(schema, wire);
  }
  return wire as RestInputSchema<S>;
}

/** REST field name of a schema path (`filter.categoryIds` → `category_ids`, `locations.0` → `locations`). */
export function restFieldName(path: string): string {
  const named = path.split('.').filter((segment) => !/^\d+$/.test(segment));
  return toSnake(named.at(-1) ?? path);
}

/** A field the message names beside its own (`must not be after createAtEnd`): a camelCase word. */
const NAMED_FIELD = /\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b/g;

export function restFieldErrors(fields: FieldError[]): FieldError[] {
  return fields.map((f) => ({ field: restFieldName(f.field), message: f.message.replace(NAMED_FIELD, toSnake) }));
}

/**
 * Decodes a REST object (JSON body or query parameters) with the input's REST schema into the
 * schema's own values. Throws 400 naming every bad field (an unknown one as the client spelled it).
 */
export function decodeRestInput<S extends z.ZodType & { shape: Record<string, z.ZodType> }>(schema: S, input: Record<string, unknown>): z.output<S> & Record<string, unknown> {
  const result = restInputSchema(schema).safeParse(input);
  if (result.success) return result.data as z.output<S> & Record<string, unknown>;
  const errors = result.error.issues.flatMap((issue): FieldError[] =>
    issue.code === 'unrecognized_keys' && issue.path.length === 0
      ? issue.keys.map((key) => ({ field: key, message: 'unknown field' }))
      : restFieldErrors(fieldErrorsFromZod(new z.ZodError([issue]))),
  );
  throw ApiError.badRequest(onePerField(errors));
}
