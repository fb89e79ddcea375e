import type { z } from 'zod';
import { builder } from './builder.js';

// GraphQL inputs derived from the zod schemas, so each input is defined once (src/inputs/).
// A zod enum becomes a GraphQL enum of the same values; an integer that fits 32 bits becomes Int,
// a wider one (follower bounds pass 2^31) SafeInt, other numbers Float.

type AnySchema = z.ZodType;
type EnumRef = ReturnType<typeof builder.enumType>;
const enumRefs = new Map<string, EnumRef>();

function enumKey(options: readonly string[]): string {
  return options.join('|');
}

export function enumFromZod(name: string, schema: z.ZodEnum): EnumRef {
  const options = schema.options as string[];
  const ref = builder.enumType(name, { values: options, description: schema.description });
  enumRefs.set(enumKey(options), ref);
  return ref;
}

function unwrap(schema: AnySchema): AnySchema {
  let current = schema as AnySchema & { unwrap?: () => AnySchema };
  while (['optional', 'nullable', 'default'].includes(current._zod.def.type) && current.unwrap) {
    current = current.unwrap() as AnySchema & { unwrap?: () => AnySchema };
  }
  return current;
}

type InputType = 'String' | 'Int' | 'SafeInt' | 'Float' | 'Boolean' | EnumRef;

const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };

function scalarFor(schema: AnySchema, path: string): InputType {
  const inner = unwrap(schema) as AnySchema & { isInt?: boolean; minValue?: number | null; maxValue?: number | null; options?: string[] };
  switch (inner._zod.def.type) {
    case 'string':
      return 'String';
    case 'boolean':
      return 'Boolean';
    case 'number':
      if (!inner.isInt) return 'Float';
      return (inner.minValue ?? -Infinity) >= INT32.min && (inner.maxValue ?? Infinity) <= INT32.max ? 'Int' : 'SafeInt';
    case 'enum': {
      const ref = enumRefs.get(enumKey(inner.options ?? []));
      if (!ref) throw new Error(`${path}: register the enum with enumFromZod before deriving inputs`);
      return ref;
    }
    default:
      throw new Error(`${path}: no GraphQL input type for zod ${inner._zod.def.type}`);
  }
}

export function inputFromZod(name: string, shape: Record<string, AnySchema>, description?: string) {
  return builder.inputType(name, {
    description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(shape).map(([field, schema]) => {
          const inner = unwrap(schema);
          const options = { required: false, description: schema.description ?? inner.description } as const;
          if (inner._zod.def.type === 'array') {
            const element = (inner as z.ZodArray<AnySchema>).element;
            return [field, t.field({ ...options, type: [scalarFor(element, `${name}.${field}`)] as never })];
          }
          return [field, t.field({ ...options, type: scalarFor(inner, `${name}.${field}`) as never })];
        }),
      ),
  });
}
