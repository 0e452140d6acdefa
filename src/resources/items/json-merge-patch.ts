/**
 * RFC 7396 §2 JSON Merge Patch: objects merge recursively, null removes a member, anything else
 * (arrays included) replaces the target.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else result[name] = applyMergePatch(result[name], value);
  }
  return result;
}
