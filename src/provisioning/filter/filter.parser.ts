import { ScimError } from '../http/scim-error.js';
import { SCIM_TYPE, type ScimType } from '../scim.constants.js';
import { COMPARE_OPERATORS, type AttrPath, type CompValue, type CompareOperator, type Filter, type PatchPath } from './filter.ast.js';
import { tokenize, type Token } from './filter.tokenizer.js';

/** RFC 7643 §2.1: ATTRNAME = ALPHA *(nameChar); `$ref` is the one name outside it. */
const ATTR_NAME = /^(?:[A-Za-z][A-Za-z0-9_-]*|\$ref)$/;
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
/** Nesting beyond this is no connector's filter: refuse it before the recursion gets deep. */
const MAX_DEPTH = 32;

/** Parses `filter` (RFC 7644 §3.4.2.2); a malformed one is 400 invalidFilter. */
export function parseFilter(text: string): Filter {
  const parser = new Parser(tokenize(text), SCIM_TYPE.invalidFilter);
  const filter = parser.orExpression(0);
  parser.expectEnd();
  return filter;
}

/** Parses a PATCH operation's path (RFC 7644 §3.5.2); a malformed one is 400 invalidPath. */
export function parsePatchPath(text: string): PatchPath {
  const parser = new Parser(tokenize(text, SCIM_TYPE.invalidPath), SCIM_TYPE.invalidPath);
  const result = parser.patchPath();
  parser.expectEnd();
  return result;
}

/** An attribute path written as one word: `[urn:…:]name[.sub]`. */
export function parseAttrPath(word: string, errorType: ScimType = SCIM_TYPE.invalidFilter): AttrPath {
  let schema: string | undefined;
  let rest = word;
  if (/^urn:/i.test(word)) {
    const colon = word.lastIndexOf(':');
    schema = word.slice(0, colon);
    rest = word.slice(colon + 1);
  }
  const [attr, sub, ...more] = rest.split('.');
  if (!ATTR_NAME.test(attr ?? '') || (sub !== undefined && !ATTR_NAME.test(sub)) || more.length > 0) {
    throw ScimError.badRequest(errorType, `${JSON.stringify(word)} is not an attribute path`);
  }
  return { ...(schema === undefined ? {} : { schema }), attr, ...(sub === undefined ? {} : { sub }) };
}

/** Recursive descent over the grammar: `or` binds loosest, then `and`, then `not` and brackets (§3.4.2.2, Table 4). */
class Parser {
  private position = 0;
  /** Value filters do not nest (§3.4.2.2: valFilter is attrExp / logExp / "not" over those). */
  private inValuePath = false;

  constructor(
    private readonly tokens: Token[],
    private readonly errorType: ScimType,
  ) {}

  orExpression(depth: number): Filter {
    let left = this.andExpression(depth);
    while (this.keyword('or')) left = { kind: 'or', left, right: this.andExpression(depth) };
    return left;
  }

  patchPath(): PatchPath {
    const word = this.next();
    if (word?.type !== 'word') throw this.fail('Expected an attribute path', word);
    const path = parseAttrPath(word.text, this.errorType);
    if (this.peek()?.type !== '[') return { path };
    if (path.sub !== undefined) throw this.fail('A value filter follows the attribute, not a sub-attribute', this.peek());
    this.position++;
    this.inValuePath = true;
    const filter = this.orExpression(1);
    this.inValuePath = false;
    this.expect(']');
    const after = this.next();
    if (after === undefined) return { path, filter };
    // `]` then `.sub`: the tokenizer reads ".value" as one word.
    if (after.type !== 'word' || !after.text.startsWith('.') || !ATTR_NAME.test(after.text.slice(1))) throw this.fail('Expected ".subAttribute" after "]"', after);
    return { path, filter, subAfterFilter: after.text.slice(1) };
  }

  expectEnd(): void {
    const extra = this.peek();
    if (extra) throw this.fail('Unexpected input', extra);
  }

  private andExpression(depth: number): Filter {
    let left = this.unary(depth);
    while (this.keyword('and')) left = { kind: 'and', left, right: this.unary(depth) };
    return left;
  }

  private unary(depth: number): Filter {
    if (depth > MAX_DEPTH) throw this.fail(`The filter nests deeper than ${MAX_DEPTH} levels`, this.peek());
    const token = this.peek();
    if (token?.type === 'word' && token.text.toLowerCase() === 'not' && this.tokens[this.position + 1]?.type === '(') {
      this.position++;
      return { kind: 'not', filter: this.bracketed(depth + 1) };
    }
    if (token?.type === '(') return this.bracketed(depth + 1);
    return this.attributeExpression(depth);
  }

  private bracketed(depth: number): Filter {
    this.expect('(');
    const inner = this.orExpression(depth);
    this.expect(')');
    return inner;
  }

  private attributeExpression(depth: number): Filter {
    const word = this.next();
    if (word?.type !== 'word') throw this.fail('Expected an attribute path', word);
    const path = parseAttrPath(word.text, this.errorType);
    if (this.peek()?.type === '[') {
      // §3.4.2.2 valuePath: a filter over the values of a multi-valued complex attribute.
      if (path.sub !== undefined || this.inValuePath) throw this.fail('Unexpected "["', this.peek());
      this.position++;
      this.inValuePath = true;
      const filter = this.orExpression(depth + 1);
      this.inValuePath = false;
      this.expect(']');
      return { kind: 'valuePath', path, filter };
    }
    const operator = this.next();
    if (operator?.type !== 'word') throw this.fail('Expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr)', operator);
    const op = operator.text.toLowerCase();
    if (op === 'pr') return { kind: 'present', path };
    if (!(COMPARE_OPERATORS as readonly string[]).includes(op)) throw this.fail(`Unknown operator ${JSON.stringify(operator.text)}`, operator);
    return { kind: 'compare', path, op: op as CompareOperator, value: this.compValue() };
  }

  /** compValue = false / null / true / number / string (§3.4.2.2). */
  private compValue(): CompValue {
    const token = this.next();
    if (token?.type === 'string') return token.value;
    if (token?.type === 'word') {
      const text = token.text.toLowerCase();
      if (text === 'true') return true;
      if (text === 'false') return false;
      if (text === 'null') return null;
      if (NUMBER.test(token.text)) return Number(token.text);
    }
    throw this.fail('Expected a value: a "string" in double quotes, a number, true, false or null', token);
  }

  private keyword(name: string): boolean {
    const token = this.peek();
    if (token?.type === 'word' && token.text.toLowerCase() === name) {
      this.position++;
      return true;
    }
    return false;
  }

  private expect(type: '(' | ')' | '[' | ']'): void {
    const token = this.next();
    if (token?.type !== type) throw this.fail(`Expected "${type}"`, token);
  }

  private peek(): Token | undefined {
    return this.tokens[this.position];
  }

  private next(): Token | undefined {
    return this.tokens[this.position++];
  }

  private fail(message: string, token: Token | undefined): ScimError {
    return ScimError.badRequest(this.errorType, token === undefined ? `${message} at the end` : `${message} at position ${token.at + 1}`);
  }
}
