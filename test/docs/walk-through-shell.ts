/**
 * One `bash -euo pipefail` for a whole walk-through, fed one command at a time on its standard
 * input, so that what a step sets (VERIFIER, CLIENT_ID) is there for the next one, as in the
 * reader's terminal, and the test can read each command's output before it sends the next.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface Output {
  stdout: string;
  stderr: string;
}

/** How long one command may take (a CLI call, a curl to the local server). */
const COMMAND_TIMEOUT_MS = 30_000;

export class Shell {
  private readonly bash: ChildProcessWithoutNullStreams;
  private stdout = '';
  private stderr = '';
  private exited: number | null = null;
  private readonly mark = `walk-through-${randomBytes(8).toString('hex')}`;
  private count = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.bash = spawn('bash', ['-euo', 'pipefail'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.bash.on('exit', (code) => (this.exited = code ?? 1));
  }

  /**
   * Runs one command line and resolves to what it printed. Its standard input is /dev/null (the
   * brace group keeps it in this shell, so its assignments stay); a line on each stream marks its
   * end. Fails with the output when the command fails (`-e` ends the shell) or hangs.
   */
  async run(command: string): Promise<Output> {
    const end = `\n${this.mark}-${++this.count}\n`;
    const printEnd = `printf '\\n%s\\n' ${this.mark}-${this.count}`;
    this.bash.stdin.write(`{\n${command}\n} </dev/null\n${printEnd}; ${printEnd} >&2\n`);
    const deadline = Date.now() + COMMAND_TIMEOUT_MS;
    while (!(this.stdout.includes(end) && this.stderr.includes(end))) {
      if (this.exited !== null || Date.now() > deadline) {
        const why = this.exited !== null ? `bash exited with ${this.exited}` : `no end after ${COMMAND_TIMEOUT_MS} ms`;
        throw new Error(`${why} running:\n${command}\n--- stdout:\n${this.stdout}\n--- stderr:\n${this.stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const output = { stdout: this.stdout.slice(0, this.stdout.indexOf(end)), stderr: this.stderr.slice(0, this.stderr.indexOf(end)) };
    this.stdout = this.stdout.slice(this.stdout.indexOf(end) + end.length);
    this.stderr = this.stderr.slice(this.stderr.indexOf(end) + end.length);
    return output;
  }

  /** Ends the shell (end of input) and waits for it. */
  async close(): Promise<void> {
    if (this.exited !== null) return;
    const exited = new Promise((resolve) => this.bash.once('exit', resolve));
    this.bash.stdin.end();
    await exited;
  }
}
