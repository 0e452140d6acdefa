/**
 * A real Chromium for the browser tests, found the same way on every machine:
 *
 * 1. `CHROMIUM_PATH`, when set: that binary and nothing else (a path someone chose must not be
 *    silently replaced by another browser);
 * 2. Debian's `/usr/bin/chromium`, when installed;
 * 3. the headless shell that the `@sparticuz/chromium` dev dependency carries, unpacked on first
 *    use into the temporary directory (`/tmp/chromium`, about 4 s once; later runs reuse it).
 *
 * A candidate that is missing or does not start is passed over for the next one, and when none
 * starts the error names each and why, so the browser spec fails on its own with the reason.
 */
import { constants, existsSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * The flags this machine needs. Playwright adds most of them already; they are listed so that they
 * hold whatever its defaults become. Tests run as root, where Chromium's sandbox cannot start
 * (--no-sandbox); there is no GPU (--disable-gpu); and on this closed network Chromium's own
 * connections (component updates, sync, QUIC probes) are refused and disturb the page under test.
 *
 * @sparticuz/chromium's recommended `chromium.args` are not used: they are written for AWS Lambda
 * and turn off the same-origin policy (--disable-web-security), site isolation and mixed-content
 * blocking, which a test of an authorization server's pages must keep as a person's browser has them.
 * Its `--headless='shell'` is not needed either: its binary is the headless shell, and Playwright
 * passes --headless itself.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launch options for one browser binary, and where it came from (for messages). */
export interface ChromiumLaunch {
  source: string;
  options: LaunchOptions & { executablePath: string };
}

type Candidate = { launch: ChromiumLaunch } | { skipped: string };

async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

function launchOptions(source: string, executablePath: string, env?: Record<string, string>): ChromiumLaunch {
  return { source, options: { executablePath, headless: true, chromiumSandbox: false, args: CHROMIUM_ARGS, ...(env ? { env } : {}) } };
}

/** The binary of @sparticuz/chromium (Linux only), unpacked into the temporary directory if it is not there yet. */
async function sparticuzChromium(): Promise<Candidate> {
  const source = '@sparticuz/chromium';
  if (process.platform !== 'linux') return { skipped: `${source}: its binary runs on Linux only (this is ${process.platform})` };
  let packaged: typeof import('@sparticuz/chromium').default;
  try {
    packaged = (await import('@sparticuz/chromium')).default;
  } catch {
    return { skipped: `${source}: not installed (a dev dependency: npm ci, without --omit=dev)` };
  }
  let executablePath: string;
  try {
    executablePath = await packaged.executablePath();
  } catch (error) {
    return { skipped: `${source}: could not unpack its browser into ${tmpdir()}: ${messageOf(error)}` };
  }
  // It carries Open Sans and a fonts.conf for machines without fonts (a slim container), where
  // text would otherwise have no glyphs; a machine with its own fontconfig keeps its fonts.
  const fonts = join(tmpdir(), 'fonts');
  const needsFonts = process.env.FONTCONFIG_PATH === undefined && !existsSync('/etc/fonts/fonts.conf') && existsSync(join(fonts, 'fonts.conf'));
  return { launch: launchOptions(`${source} (unpacked to ${executablePath})`, executablePath, needsFonts ? { ...definedEnv(), FONTCONFIG_PATH: fonts } : undefined) };
}

/** An error's message; `instanceof Error` is false for Node's own errors inside Jest's module sandbox. */
function messageOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
}

function definedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The candidates in order of preference, each looked up only when the ones before it did not start. */
async function* candidates(): AsyncGenerator<Candidate> {
  const chosen = process.env.CHROMIUM_PATH;
  if (chosen) {
    yield (await isExecutable(chosen)) ? { launch: launchOptions(`CHROMIUM_PATH=${chosen}`, chosen) } : { skipped: `CHROMIUM_PATH=${chosen}: not an executable file` };
    return;
  }
  yield (await isExecutable(DEBIAN_CHROMIUM)) ? { launch: launchOptions(DEBIAN_CHROMIUM, DEBIAN_CHROMIUM) } : { skipped: `${DEBIAN_CHROMIUM}: not installed (apt-get install chromium)` };
  yield await sparticuzChromium();
}

/**
 * Why a launch failed, in one line: Playwright's message runs to dozens of lines (the command line,
 * its call log), while the reason is usually what the browser wrote to stderr (a missing shared
 * library, say) and its exit code.
 */
function launchFailure(error: unknown): string {
  const lines = messageOf(error).split('\n');
  const headline = lines.find((line) => line.trim() !== '') ?? 'unknown error';
  const stderr = lines.filter((line) => /^\[pid=\d+\]\[err\] /.test(line)).map((line) => line.replace(/^\[pid=\d+\]\[err\] /, '').trim());
  const exit = lines.map((line) => /process did exit: (exitCode=\S+ signal=\S+|exitCode=\S+, signal=\S+)>/.exec(line)?.[1]).find(Boolean);
  return [exit ? `exited (${exit})` : headline, ...stderr.slice(-3)].join(': ');
}

/**
 * Launches the first Chromium that starts. Throws (never exits the process) with every candidate
 * tried and why it was passed over, so that only the suite that needs a browser fails.
 */
export async function launchChromium(): Promise<{ browser: Browser; launch: ChromiumLaunch }> {
  const tried: string[] = process.env.CHROMIUM_PATH ? [] : ['CHROMIUM_PATH: not set'];
  for await (const candidate of candidates()) {
    if ('skipped' in candidate) {
      tried.push(candidate.skipped);
      continue;
    }
    try {
      return { browser: await chromium.launch(candidate.launch.options), launch: candidate.launch };
    } catch (error) {
      tried.push(`${candidate.launch.source}: did not start: ${launchFailure(error)}`);
    }
  }
  throw new Error(
    [
      'No Chromium could be started for the browser tests. Tried, in order:',
      ...tried.map((reason) => `  - ${reason}`),
      "Set CHROMIUM_PATH to a Chromium or Chrome binary, install Debian's chromium package, or run npm ci (the @sparticuz/chromium dev",
      `dependency; its binary needs libnss3 and libexpat1). If ${join(tmpdir(), 'chromium')} is damaged (an interrupted first run), delete it.`,
    ].join('\n'),
  );
}
