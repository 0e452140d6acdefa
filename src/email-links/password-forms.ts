import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { DomainError } from '../common/domain-error.js';
import { UsersService } from '../users/users.service.js';
import { newPassword, type EmailForm } from './email-forms.js';
import { EmailPages } from './email-pages.js';

/** The "choose a password" form of a reset and an invitation, and its check before the link is used up. */
@Injectable()
export class PasswordForms {
  constructor(
    private readonly users: UsersService,
    private readonly pages: EmailPages,
  ) {}

  passwordForm(request: FastifyRequest, options: { title: string; action: string; token: string; notes?: string[]; error?: string; intro?: string[] }): InteractionOutcome {
    return this.pages.form(request, {
      title: options.title,
      action: options.action,
      submit: 'Set password',
      intro: options.intro,
      hidden: [{ name: 'token', value: options.token.slice(0, 100) }],
      fields: [
        { name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password' },
        { name: 'password_confirm', label: 'New password again', type: 'password', autocomplete: 'new-password' },
      ],
      notes: ['At least 8 characters. A long phrase is easier to remember and harder to guess.', ...(options.notes ?? [])],
      error: options.error,
    });
  }

  /** The password, if both fields agree and it meets the rules: checked before the link is used, so a mistyped password does not burn it. */
  async checkedPassword(form: EmailForm): Promise<{ password: string } | { error: string }> {
    const chosen = newPassword(form);
    if ('error' in chosen) return chosen;
    try {
      await this.users.hashNewPassword(chosen.password);
    } catch (error) {
      if (error instanceof DomainError) return { error: error.message };
      throw error;
    }
    return chosen;
  }
}
