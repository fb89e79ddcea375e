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
// lowercase ("male", "short"). The renderer of each type is derived once from the schema type and
// reused, so rendering a page costs a plain object walk, no name conversion per field per row.

type Render = (value: unknown) => unknown;
const renderers = new Map<GraphQLOutputType, Render>();

export function renderRest(value: unknown, type: GraphQLOutputType): unknown {
  return rendererOf(type)(value);
}

function rendererOf(type: GraphQLOutputType): Render {
  let render = renderers.get(type);
  if (render) return render;
  if (isNonNullType(type)) render = rendererOf(type.ofType);
  else if (isListType(type)) {
    const item = rendererOf(type.ofType);
    render = (value) => (value == null ? null : (value as unknown[]).map(item));
  } else if (isEnumType(getNamedType(type))) {
    render = (value) => (value == null ? null : String(value).toLowerCase());
  } else if (isObjectType(type)) {
    // Fields are resolved on first use: object types refer to each other (and to themselves).
    let fields: Map<string, { name: string; render: Render }> | null = null;
    render = (value) => {
      if (value == null) return null;
      fields ??= new Map(Object.entries(type.getFields()).map(([key, field]) => [key, { name: toSnake(key), render: rendererOf(field.type) }]));
      const out: Record<string, unknown> = {};
      for (const key in value as Record<string, unknown>) {
        const field = fields.get(key)!;
        out[field.name] = field.render((value as Record<string, unknown>)[key]);
      }
      return out;
    };
  } else {
    render = (value) => (value === undefined ? null : value);
  }
  renderers.set(type, render);
  return render;
}
