import { Inject, Injectable } from '@nestjs/common';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../common/project-root.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import { MAIL_TEMPLATES, type MailTemplateName } from '../email-links/mail-sender.js';

/** The built-in templates; MAIL_TEMPLATES_DIR's files of the same names replace them one by one. */
const BUILT_IN = join(PROJECT_ROOT, 'src', 'mail', 'templates');
const PLACEHOLDER = /\{\{\s*([a-zA-Z][a-zA-Z0-9_]*)\s*\}\}/g;

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

interface Template {
  /** The .txt file's first line, "Subject: …". */
  subject: string;
  text: string;
  html: string;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/**
 * The messages' templates, read once at start-up (a missing or unreadable file stops the start
 * with its name): plain text and HTML, with {{name}} placeholders. Values are escaped in HTML and
 * kept to one line in the subject (no header injection); an unknown placeholder renders empty.
 */
@Injectable()
export class MailTemplates {
  private readonly templates = new Map<MailTemplateName, Template>();

  constructor(@Inject(mailConfig.KEY) config: MailConfig) {
    // Without SMTP nothing is sent (the CLI prints links): nothing to read.
    if (!config.smtpUrl) return;
    const override = config.templatesDir ? resolve(config.templatesDir) : null;
    const read = (file: string): string => {
      const path = override && existsSync(join(override, file)) ? join(override, file) : join(BUILT_IN, file);
      try {
        return readFileSync(path, 'utf8');
      } catch (error) {
        throw new Error(`mail template ${file} could not be read from ${path}: ${(error as Error).message}`, { cause: error });
      }
    };
    for (const name of MAIL_TEMPLATES) {
      const [first, ...rest] = read(`${name}.txt`).split(/\r?\n/);
      if (!/^Subject:\s*\S/.test(first)) throw new Error(`mail template ${name}.txt must begin with a line "Subject: …"`);
      this.templates.set(name, { subject: first.replace(/^Subject:\s*/, ''), text: rest.join('\n').replace(/^\s*\n/, ''), html: read(`${name}.html`) });
    }
  }

  render(name: MailTemplateName, values: Record<string, string>): RenderedMail {
    const template = this.templates.get(name);
    if (!template) throw new Error(`no mail template ${name}`);
    const fill = (text: string, encode: (value: string) => string) => text.replace(PLACEHOLDER, (_, key: string) => encode(values[key] ?? ''));
    return {
      subject: fill(template.subject, (value) => value.replace(/[\r\n\u2028\u2029]+/g, ' ')).trim(),
      text: fill(template.text, (value) => value),
      html: fill(template.html, escapeHtml),
    };
  }
}
