import { sql, type Kysely } from 'kysely';
import type { Category } from '../domain/records.js';
import type { Database } from './database.js';
import { executePrepared } from './prepared.js';

export interface CategoryCheck {
  /** The ids to match: the given ones and the level-3 children of given level-2 ids. */
  expanded: number[];
  unknown: number[];
  topLevel: number[];
}

// One round trip: each requested id with its level, plus the children of the level-2 ones.
export async function expandCategoryIds(db: Kysely<Database>, ids: readonly number[]): Promise<CategoryCheck> {
  const requested = [...new Set(ids)];
  if (requested.length === 0) return { expanded: [], unknown: [], topLevel: [] };
  const rows = await db
    .selectFrom('categories')
    .select(['id', 'parent_id', 'level'])
    .where((eb) => eb.or([eb('id', '=', eb.fn.any(sql.val(requested))), eb('parent_id', '=', eb.fn.any(sql.val(requested)))]))
    .execute();
  const found = new Map(rows.filter((r) => requested.includes(r.id)).map((r) => [r.id, r.level]));
  const unknown = requested.filter((id) => !found.has(id));
  const topLevel = requested.filter((id) => found.get(id) === 1);
  const expanded = new Set(requested.filter((id) => (found.get(id) ?? 1) > 1));
  for (const row of rows) {
    if (row.parent_id !== null && found.get(row.parent_id) === 2) expanded.add(row.id);
  }
  return { expanded: [...expanded].sort((a, b) => a - b), unknown, topLevel };
}

export async function listCategories(db: Kysely<Database>) {
  return db.selectFrom('categories').selectAll().orderBy('id').execute();
}

/**
 * The whole taxonomy, in id order (a few hundred rows). Imports write categories without the
 * change feed, so a reader keeps it no longer than one request (src/schema/loaders.ts).
 */
export async function loadTaxonomy(db: Kysely<Database>): Promise<Category[]> {
  const rows = await executePrepared(db, db.selectFrom('categories').select(['id', 'parent_id', 'level', 'name']).orderBy('id'));
  return rows.map((row) => ({ categoryId: row.id, parentId: row.parent_id, level: row.level, name: row.name }));
}
