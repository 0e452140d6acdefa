/**
 * The test as the reader of a walk-through: it types each command of the steps into one shell,
 * reads what they print, fills in what the page tells the reader to copy from an answer, and does
 * the person's part in the browser (docs/development.md, "Runnable walk-throughs"):
 *
 * - A line made only of `NAME=value` assignments of plain values (no `$`, no quotes), such as
 *   `CLIENT_ID=…; CLIENT_SECRET=…` or `CODE=lk_ac_...`, is what the reader copies from an answer.
 *   The test types the value the page means instead of the example.
 * - So is a token written as its prefix and an ellipsis inside a command (`refresh_token=lk_rt_…`).
 *
 * Where the value comes from: `lk_ac_` is the code the person gets by signing in at the last
 * authorization URL the walk-through printed and allowing; `lk_dc_` is the last device code
 * printed, once the person has approved its user code at the verification page; any other `lk_xx_`
 * is the last printed value with that prefix (the newest access or refresh token); anything else is
 * the member named like the variable in lower case (CLIENT_ID: `client_id`) of the last printed JSON
 * holding one. The documentation's `http://localhost:3000` becomes the test server's address.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Browser } from '../helpers/browser.js';
import { decideDevice } from '../helpers/device.js';
import { signIn } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { printedJson, sameShape } from './walk-through-json.js';
import { Shell } from './walk-through-shell.js';
import type { Step, WalkThrough } from './walk-through-blocks.js';

/** The documentation's server, as the reader's `npm start` serves it. */
export const DOCUMENTED_ORIGIN = 'http://localhost:3000';

export interface Command {
  /** The command as the page writes it. */
  documented: string;
  /** The command as typed: placeholders filled, the server's address the test's. */
  typed: string;
  stdout: string;
  stderr: string;
  /** The JSON values it printed, in order. */
  json: unknown[];
}

export interface Transcript {
  commands: Command[];
  /** Where the browser was sent after each of the person's sign-ins (the client's redirect URI). */
  redirects: URL[];
}

const ASSIGNMENT = /[A-Z_][A-Z0-9_]*=[^\s$'"`;#\\]+/.source;
const ASSIGNMENTS = new RegExp(`^\\s*${ASSIGNMENT}(\\s*;\\s*${ASSIGNMENT})*\\s*;?\\s*(#.*)?$`);
const INLINE_PLACEHOLDER = /\blk_[a-z]{2}_(?:…|\.\.\.)/g;

export class Reader {
  private readonly transcript: Transcript = { commands: [], redirects: [] };

  constructor(
    private readonly origin: URL,
    private readonly person: TestUser,
  ) {}

  /** Runs the steps in one shell in `cwd`; the transcript of what was typed and printed. */
  async follow(walkThrough: WalkThrough, cwd: string, env: NodeJS.ProcessEnv): Promise<Transcript> {
    const shell = new Shell(cwd, env);
    try {
      for (const step of walkThrough.steps) await this.take(step, shell, cwd);
    } finally {
      await shell.close();
    }
    return this.transcript;
  }

  private async take(step: Step, shell: Shell, cwd: string): Promise<void> {
    if (step.kind === 'by-the-test') return;
    if (step.kind === 'file') {
      await mkdir(dirname(join(cwd, step.path!)), { recursive: true });
      await writeFile(join(cwd, step.path!), `${step.text}\n`);
      return;
    }
    if (step.kind === 'answer') {
      const printed = this.transcript.commands.at(-1)?.json.at(-1);
      const problems = sameShape(JSON.parse(step.text), printed);
      if (problems.length > 0) throw new Error(`${step.at}: the documented answer is not what the step printed:\n${problems.join('\n')}\nprinted: ${JSON.stringify(printed)}`);
      return;
    }
    for (const documented of commandLines(step.text)) {
      try {
        const typed = (await this.fill(documented)).replaceAll(DOCUMENTED_ORIGIN, this.origin.origin);
        const output = await shell.run(typed);
        this.transcript.commands.push({ documented, typed, ...output, json: printedJson(output.stdout) });
      } catch (error) {
        // The page's line first, so the message says which block to fix.
        if (error instanceof Error) error.message = `${step.at}: ${error.message}`;
        throw error;
      }
    }
  }

  /** The command with the reader's values in place of the page's examples. */
  private async fill(command: string): Promise<string> {
    if (ASSIGNMENTS.test(command)) {
      const assignments = command.replace(/#.*$/, '').split(';').map((a) => a.trim()).filter(Boolean);
      const typed: string[] = [];
      for (const assignment of assignments) {
        const [name, example] = assignment.split(/=(.*)/s, 2);
        typed.push(`${name}=${quoted(await this.valueFor(name, example))}`);
      }
      return typed.join('; ');
    }
    let typed = command;
    for (const [placeholder] of command.matchAll(INLINE_PLACEHOLDER)) typed = typed.replace(placeholder, quoted(await this.valueFor('', placeholder)));
    return typed;
  }

  private async valueFor(name: string, example: string): Promise<string> {
    const prefix = /^lk_[a-z]{2}_/.exec(example)?.[0];
    if (prefix === 'lk_ac_') return this.signIn();
    if (prefix === 'lk_dc_') return this.approveDevice();
    const value = prefix ? this.lastString((s) => s.startsWith(prefix)) : this.lastMember(name.toLowerCase());
    if (value === undefined) throw new Error(`Nothing printed so far gives ${name || example} (${prefix ? `a value starting ${prefix}` : `a "${name.toLowerCase()}" member`})`);
    return value;
  }

  /** The person opens the last authorization URL printed, signs in and allows; the code sent back. */
  private async signIn(): Promise<string> {
    const url = this.lastMatch(/https?:\/\/\S+\/authorize\?\S+/g);
    if (!url) throw new Error('The walk-through needs a code, but printed no authorization URL to sign in at');
    const redirect = await signIn(this.person, new URL(url));
    this.transcript.redirects.push(redirect);
    const code = redirect.searchParams.get('code');
    if (!code) throw new Error(`The sign-in sent the browser to ${redirect.href}, with no code`);
    return code;
  }

  /** The person approves the last user code printed at the verification page; its device code. */
  private async approveDevice(): Promise<string> {
    const started = this.allJson().findLast((v): v is { device_code: string; user_code: string } => isObject(v) && typeof v.device_code === 'string' && typeof v.user_code === 'string');
    if (!started) throw new Error('The walk-through needs a device code, but printed no device authorization');
    const page = await decideDevice(new Browser(this.origin.origin), this.person, started.user_code);
    if (page.status !== 200) throw new Error(`Approving the device answered ${page.status}:\n${page.body}`);
    return started.device_code;
  }

  private allJson(): unknown[] {
    return this.transcript.commands.flatMap((c) => c.json);
  }

  private lastMember(name: string): string | undefined {
    const holder = this.allJson().findLast((v) => isObject(v) && typeof v[name] === 'string');
    return holder ? ((holder as Record<string, string>)[name]) : undefined;
  }

  private lastString(wanted: (s: string) => boolean): string | undefined {
    const strings: string[] = [];
    const collect = (v: unknown): void => {
      if (typeof v === 'string') strings.push(v);
      else if (Array.isArray(v)) v.forEach(collect);
      else if (isObject(v)) Object.values(v).forEach(collect);
    };
    this.allJson().forEach(collect);
    return strings.findLast(wanted);
  }

  private lastMatch(pattern: RegExp): string | undefined {
    return this.transcript.commands.flatMap((c) => [...c.stdout.matchAll(pattern)].map((m) => m[0])).at(-1);
  }
}

/** A block's commands: each line with the lines its trailing backslashes continue; no blank or comment lines. */
export function commandLines(block: string): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    pending = pending ? `${pending}\n${line}` : line;
    if (line.endsWith('\\')) continue;
    if (pending.trim() !== '' && !pending.trim().startsWith('#')) commands.push(pending);
    pending = '';
  }
  if (pending) commands.push(pending);
  return commands;
}

function quoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
