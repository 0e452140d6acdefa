import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { CliModule } from './cli.module.js';
import { COMMANDS, isUserError, UsageError } from './commands.js';

/**
 * Latchkey's admin CLI: `npm run -s cli -- <command> [flags]`.
 * Prints one JSON document on stdout for scripts; problems go to stderr with a non-zero exit.
 */
function help(): string {
  return ['Usage: npm run -s cli -- <command> [flags]', '', 'Commands:', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    // stdout carries only results; a usage error goes to stderr like every other error.
    process.stderr.write(`latchkey: no command given\n\n${help()}\n`);
    return 2;
  }
  if (name === '--help' || name === 'help') {
    process.stdout.write(help() + '\n');
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`latchkey: unknown command "${name}"\n\n${help()}\n`);
    return 2;
  }

  let flags;
  try {
    flags = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    process.stderr.write(`latchkey: ${(error as Error).message}\nUsage: ${command.usage}\n`);
    return 2;
  }

  // No framework logs: stdout carries exactly one JSON document.
  const app = await NestFactory.createApplicationContext(CliModule, { logger: false, abortOnError: false });
  try {
    const result = await command.run(app, flags);
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return 0;
  } catch (error) {
    if (!isUserError(error)) throw error;
    const usage = error instanceof UsageError ? `\nUsage: ${command.usage}` : '';
    process.stderr.write(`latchkey: ${error.message}${usage}\n`);
    return 1;
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`latchkey: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
