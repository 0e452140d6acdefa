import type { INestApplicationContext } from '@nestjs/common';
import { resolve } from 'node:path';
import { DomainError } from '../common/domain-error.js';

export type Flags = Record<string, string | boolean | (string | boolean)[] | undefined>;

interface CommandLine {
  /** Flags it takes, for util.parseArgs. */
  options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;
  usage: string;
}

/** A command that works through the application's services (main.ts starts them: CliModule). */
export interface AppCommand extends CommandLine {
  standalone?: undefined;
  run(app: INestApplicationContext, flags: Flags): Promise<unknown>;
}

/**
 * A command that starts no application: it opens the connections it needs itself, because the
 * application's start-up would do what it must not (db:copy: apply migrations to the deployment
 * it copies; doctor: fail on the very database or Redis it is asked to diagnose).
 */
export interface StandaloneCommand extends CommandLine {
  standalone: true;
  run(flags: Flags): Promise<unknown>;
}

export type Command = AppCommand | StandaloneCommand;

/**
 * What a command prints when it is not just one JSON document: a text for people (doctor's report,
 * unless --json) and an exit status other than 0 (doctor found a failure).
 */
export class CommandOutput {
  constructor(
    readonly document: unknown,
    readonly options: { text?: string; exitCode?: number } = {},
  ) {}
}

/** Thrown for a command line that cannot be run as given; printed to stderr with the usage. */
export class UsageError extends Error {}

/** Thrown when a command was run as given and could not do its job (a refused copy, a document that does not apply): printed to stderr, exit 1. */
export class CommandFailed extends Error {}

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function isUserError(error: unknown): error is UsageError | CommandFailed | DomainError {
  return error instanceof UsageError || error instanceof CommandFailed || error instanceof DomainError;
}

let callerDirectory = process.cwd();

/** Where the command was called from: scripts/latchkey.mjs runs every command in the project's folder. */
export function setCallerDirectory(directory: string): void {
  callerDirectory = directory;
}

/** A path given on the command line, read as the caller meant it: from the directory they called from. */
export function callerPath(path: string): string {
  return resolve(callerDirectory, path);
}
