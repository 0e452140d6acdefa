import type { INestApplicationContext } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import type { ClientDeclarations, PlanAction, PlanEntry } from '../clients/client-declarations.js';
import { callerPath, CommandFailed, required, type AppCommand } from './command.js';

const SIGNS: Record<PlanAction, string> = { create: '+', update: '~', delete: '-', unchanged: '=', keep: '·' };

/** The plan for people, one client a line: what changes, never a value that could be a secret. */
function planLines(entries: readonly PlanEntry[]): string {
  return entries
    .map((entry) => {
      const fields = entry.changes ? `: ${Object.keys(entry.changes).join(', ')}` : '';
      const note = entry.note ? ` (not in the file; kept: ${entry.note})` : entry.action === 'keep' ? ' (not in the file; kept because of --keep-unlisted)' : '';
      return `latchkey:   ${SIGNS[entry.action]} ${entry.action.padEnd(9)} ${entry.client_id} (${JSON.stringify(entry.client_name)})${fields}${note}\n`;
    })
    .join('');
}

/** The document: YAML for .yaml and .yml (and anything else: YAML reads JSON too), JSON for .json. */
async function readDocument(path: string): Promise<unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CommandFailed(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    if (extname(path) === '.json') return JSON.parse(text);
    const { parse } = await import('yaml');
    return parse(text);
  } catch (error) {
    throw new CommandFailed(`${path} is not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
}

/**
 * `clients:apply -f clients.yaml`: the registered clients made to match a document kept in version
 * control (src/clients/client-declarations.ts): clients the document does not list are deleted,
 * unless `--keep-unlisted`. The plan is printed (stderr) before anything is applied, then applied
 * in one transaction; `--dry-run` stops after the plan.
 */
export const clientsApplyCommand: AppCommand = {
  usage: 'clients:apply -f FILE.(json|yaml) [--dry-run] [--keep-unlisted]',
  options: { file: { type: 'string', short: 'f' }, 'dry-run': { type: 'boolean' }, 'keep-unlisted': { type: 'boolean' } },
  async run(app: INestApplicationContext, flags) {
    const path = callerPath(required(flags, 'file'));
    const document = await readDocument(path);
    const declarations = app.get<ClientDeclarations>((await import('../clients/client-declarations.js')).ClientDeclarations);
    const { ClientDocumentError, planSummary } = await import('../clients/client-declarations.js');
    const { CLI_ADMINISTRATOR } = await import('../clients/client-change-policy.js');
    let plan;
    try {
      // The operator, on the server, is an owner and may name any variable or file (client-secret-reference.ts).
      plan = await declarations.plan(document, { editor: CLI_ADMINISTRATOR, prune: flags['keep-unlisted'] !== true, secrets: { kind: 'server', baseDirectory: dirname(path) } });
    } catch (error) {
      if (error instanceof ClientDocumentError) throw new CommandFailed(`${path}: ${error.message}`);
      throw error;
    }
    const dryRun = flags['dry-run'] === true;
    process.stderr.write(`latchkey: plan for ${path}${dryRun ? ' (dry run: nothing is applied)' : ''}:\n${planLines(plan.entries)}`);
    if (!dryRun) await declarations.apply(plan, CLI_ADMINISTRATOR);
    return { file: path, dry_run: dryRun, applied: !dryRun, summary: planSummary(plan.entries), plan: plan.entries };
  },
};
