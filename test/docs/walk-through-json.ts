/**
 * The JSON in what a walk-through's commands print (the CLI's indented objects, curl's one-line
 * answers, several in one output, text around them), and the check of a documented answer.
 */

/** Every top-level JSON object or array in `text`, in order; text that is not JSON is skipped. */
export function printedJson(text: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    const start = text.slice(i).search(/[[{]/);
    if (start === -1) break;
    const from = i + start;
    const end = matchingBracket(text, from);
    if (end !== -1) {
      try {
        values.push(JSON.parse(text.slice(from, end + 1)));
        i = end + 1;
        continue;
      } catch {
        // not JSON after all (a bracket in a sentence): look further on
      }
    }
    i = from + 1;
  }
  return values;
}

/** The index of the bracket that closes the one at `from`, skipping strings; -1 when none does. */
function matchingBracket(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/**
 * How a documented answer differs from the printed one, as a list of problems (none: the same).
 * The page's values are examples, so what must match is the shape: the same members, recursively,
 * each of the same JSON type, and a documented `lk_xx_…` string must carry that prefix.
 */
export function sameShape(documented: unknown, printed: unknown, path = '$'): string[] {
  const type = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (type(documented) !== type(printed)) return [`${path}: documented as ${type(documented)}, printed ${type(printed)}`];
  if (typeof documented === 'string') {
    const prefix = /^(lk_[a-z]{2}_)(?:…|\.\.\.)$/.exec(documented)?.[1];
    return prefix && !(printed as string).startsWith(prefix) ? [`${path}: documented as ${documented}, printed ${printed as string}`] : [];
  }
  if (Array.isArray(documented)) {
    const printedItems = printed as unknown[];
    return documented.length > 0 && printedItems.length > 0 ? sameShape(documented[0], printedItems[0], `${path}[0]`) : [];
  }
  if (type(documented) !== 'object') return [];
  const [d, p] = [documented as Record<string, unknown>, printed as Record<string, unknown>];
  return [
    ...Object.keys(d).filter((k) => !(k in p)).map((k) => `${path}.${k}: documented, not printed`),
    ...Object.keys(p).filter((k) => !(k in d)).map((k) => `${path}.${k}: printed, not documented`),
    ...Object.keys(d).filter((k) => k in p).flatMap((k) => sameShape(d[k], p[k], `${path}.${k}`)),
  ];
}
