// First: on a Node line Latchkey does not run on, one clear line and exit, before the SQLite driver loads.
import '../runtime/node-line.js';
import 'reflect-metadata';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CommandOutput, isUserError, setCallerDirectory, UsageError, type AppCommand, type Command, type Flags } from './command.js';
import { COMMANDS } from './commands.js';

/**
 * Latchkey's admin CLI: `npx latchkey <command> [flags]` or `npm run -s cli -- <command> [flags]`
 * (both run scripts/latchkey.mjs, which builds dist/ when needed and then calls runCli).
 * Prints one JSON document on stdout for scripts; problems go to stderr with a non-zero exit.
 */
function help(): string {
  return [
    'Usage: latchkey <command> [flags]',
    '  (from the project: npx latchkey <command> [flags], or npm run -s cli -- <command> [flags])',
    '',
    'Commands:',
    ...Object.values(COMMANDS).map((c) => `  ${c.usage}`),
  ].join('\n');
}

/**
 * The command's flags. A string flag takes the next argument as its value even when that starts
 * with '-' (a client id or a secret may): util.parseArgs refuses `--client-id -abc` as ambiguous,
 * so such a value is joined to its flag first (`--client-id=-abc`), which parseArgs accepts as is.
 */
function parseFlags(command: Command, args: string[]): Flags {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (name !== undefined && command.options[name]?.type === 'string' && i + 1 < args.length && args[i + 1].startsWith('-')) {
      joined.push(`${arg}=${args[++i]}`);
    } else {
      joined.push(arg);
    }
  }
  return parseArgs({ args: joined, options: command.options, strict: true, allowPositionals: false }).values;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    // stdout carries only results; a usage error goes to stderr like every other error.
    process.stderr.write(`latchkey: no command given\n\n${help()}\n`);
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help() + '\n');
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`latchkey: unknown command "${name}"\n\n${help()}\n`);
    return 2;
  }

  let flags: Flags;
  try {
    flags = parseFlags(command, rest);
  } catch (error) {
    process.stderr.write(`latchkey: ${(error as Error).message}\nUsage: ${command.usage}\n`);
    return 2;
  }

  try {
    return write(command.standalone ? await command.run(flags) : await runInApp(name, command.run, flags));
  } catch (error) {
    if (!isUserError(error)) throw error;
    const usage = error instanceof UsageError ? `\nUsage: ${command.usage}` : '';
    process.stderr.write(`latchkey: ${error.message}${usage}\n`);
    return 1;
  }
}

/**
 * Runs a command on the application's services. Nest and the application, most of a call's
 * start-up, are loaded only once the command line has parsed: help and usage errors answer at once.
 */
async function runInApp(name: string, run: AppCommand['run'], flags: Flags): Promise<unknown> {
  const [{ NestFactory }, { CliModule }] = await Promise.all([import('@nestjs/core'), import('./cli.module.js')]);
  // No framework logs: stdout carries exactly one JSON document.
  const app = await NestFactory.createApplicationContext(await CliModule.forCommand(name), { logger: false, abortOnError: false });
  try {
    return await run(app, flags);
  } finally {
    await app.close();
  }
}

/** Prints a command's result: one JSON document, or the text a command wrote for people; returns the exit status. */
function write(result: unknown): number {
  if (result instanceof CommandOutput) {
    process.stdout.write(result.options.text ?? JSON.stringify(result.document, null, 2) + '\n');
    return result.options.exitCode ?? 0;
  }
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  return 0;
}

/**
 * Runs one command line (without `node` and the script) and exits the process with its status.
 * `callerDirectory`: where relative paths on the command line start (scripts/latchkey.mjs changes
 * to the project's folder first).
 */
export function runCli(argv: string[], callerDirectory = process.cwd()): void {
  setCallerDirectory(callerDirectory);
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`latchkey: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}

/** True when Node was started on this file (`node dist/src/cli/main.js`), not when it is imported. */
function isEntryPoint(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) runCli(process.argv.slice(2));
