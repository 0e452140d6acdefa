import { AttributeKind, type Attribute } from '../collections/collection.js';
import type { DatabaseDialect } from '../config/database.config.js';

/**
 * SQL for reading one attribute out of an item's JSON document, the same text in every query and
 * in its expression index so that the database uses the index.
 *
 * PostgreSQL compares jsonb values (`data->'attr'`): numbers order as numbers, and no cast can
 * fail on an item whose attribute has another type. SQLite's json_extract returns SQL values
 * (booleans as 0/1), which order correctly within a type.
 */
export class AttributeSql {
  constructor(readonly dialect: DatabaseDialect) {}

  /** The attribute's value as the database compares and sorts it. */
  value(attribute: string): string {
    return this.dialect === 'postgres' ? `("data"->'${attribute}')` : `json_extract("data", '$.${attribute}')`;
  }

  /** A bound parameter holding `value`, comparable with value(). */
  parameter(kind: AttributeKind | undefined, value: unknown): unknown {
    if (this.dialect === 'postgres') return JSON.stringify(value);
    if (kind === AttributeKind.Boolean) return value ? 1 : 0;
    return value;
  }

  /** `:name` as a placeholder of the type value() yields. */
  placeholder(name: string): string {
    return this.dialect === 'postgres' ? `CAST(:${name} AS jsonb)` : `:${name}`;
  }

  /**
   * "(value, id) comes after the cursor": an index range seek on both databases. PostgreSQL seeks on
   * the row comparison itself. SQLite does not seek on row values over expressions, so it seeks on
   * "value >= v" and sorts out the items sharing the cursor's value, which costs a scan of those.
   */
  after(expression: string, operator: '<' | '>', valueParameter: string, idParameter: string): string {
    const value = this.placeholder(valueParameter);
    return this.dialect === 'postgres'
      ? `(${expression}, "id") ${operator} (${value}, :${idParameter})`
      : `${expression} ${operator}= ${value} AND (${expression} ${operator} ${value} OR "id" ${operator} :${idParameter})`;
  }

  /** The condition "this item matches the filter `attribute=value`". */
  matches(attribute: Attribute, parameterName: string, value: unknown): { sql: string; parameters: Record<string, unknown> } {
    if (attribute.kind === AttributeKind.StringArray) {
      // An array filter matches items whose array contains the value.
      if (this.dialect === 'postgres') {
        return { sql: `${this.value(attribute.name)} @> CAST(:${parameterName} AS jsonb)`, parameters: { [parameterName]: JSON.stringify([value]) } };
      }
      return {
        sql: `EXISTS (SELECT 1 FROM json_each("data", '$.${attribute.name}') AS element WHERE element.value = :${parameterName})`,
        parameters: { [parameterName]: value },
      };
    }
    return { sql: `${this.value(attribute.name)} = ${this.placeholder(parameterName)}`, parameters: { [parameterName]: this.parameter(attribute.kind, value) } };
  }

  /**
   * The index serving filters (and sorts) on one attribute of one collection: a partial index per
   * collection, so that attributes of the same name in other collections never get in its way.
   */
  indexDefinition(indexName: string, collection: string, attribute: Attribute): string | undefined {
    const where = `WHERE "collection" = '${collection}'`;
    if (attribute.kind === AttributeKind.StringArray) {
      // Containment (@>) is served by GIN on PostgreSQL. SQLite cannot index inside arrays: it
      // narrows by owner and collection (IDX_items_owner_collection_id) and checks those items.
      return this.dialect === 'postgres'
        ? `CREATE INDEX IF NOT EXISTS "${indexName}" ON "items" USING gin (${this.value(attribute.name)} jsonb_path_ops) ${where}`
        : undefined;
    }
    return `CREATE INDEX IF NOT EXISTS "${indexName}" ON "items" ("owner_id", ${this.value(attribute.name)}, "id") ${where}`;
  }
}
