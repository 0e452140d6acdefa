import type { Item } from '../../items/item.entity.js';

/** What clients see: the server-managed id first, the attributes, then createdAt and updatedAt (ISO 8601). */
export function toResource(item: Item): Record<string, unknown> {
  return { id: item.id, ...item.data, createdAt: item.createdAt.toISOString(), updatedAt: item.updatedAt.toISOString() };
}
