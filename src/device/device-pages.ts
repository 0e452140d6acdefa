import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Client } from '../clients/client.entity.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { PageRenderer } from '../auth/interaction/page-renderer.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { ScopeCatalog } from '../scopes/scope-catalog.js';
import type { User } from '../users/user.entity.js';

/** Where the verification page's forms post. */
export const DEVICE_ROUTES = { page: '/device', decision: '/device/decision' } as const;

/** The pages of the device verification (RFC 8628 §3.3): the code, the consent, the outcome. */
@Injectable()
export class DevicePages {
  constructor(
    private readonly renderer: PageRenderer,
    private readonly session: LoginSession,
    private readonly scopes: ScopeCatalog,
  ) {}

  /** The field for the code the device shows; `userCode` pre-filled from verification_uri_complete, still to be confirmed (§5.4). */
  codeEntry(request: FastifyRequest, user: User, options: { userCode?: string; failed?: boolean } = {}): InteractionOutcome {
    const page = this.renderer.render(
      'device',
      { title: 'Connect a device', username: user.username, userCode: options.userCode ?? '', failed: options.failed ?? false, action: DEVICE_ROUTES.page, csrfToken: this.session.csrfToken(request) },
      { status: options.failed ? 400 : 200 },
    );
    return { kind: 'page', page };
  }

  /**
   * The consent page of the code flow, for a device: the application's name and the scopes in
   * words, and (§5.4, remote phishing) a warning to allow only a device the person is holding.
   */
  consent(request: FastifyRequest, user: User, client: Client, scope: readonly string[], userCode: string): InteractionOutcome {
    const page = this.renderer.render('consent', {
      title: `Allow ${client.name}?`,
      clientName: client.name,
      clientUri: client.clientUri,
      policyUri: client.policyUri,
      tosUri: client.tosUri,
      scopes: this.scopes.describeAll(scope),
      username: user.username,
      csrfToken: this.session.csrfToken(request),
      device: { action: DEVICE_ROUTES.decision, userCode },
    });
    return { kind: 'page', page };
  }

  /** After Allow or Deny: back to the device. */
  done(client: Client, allowed: boolean): InteractionOutcome {
    return { kind: 'page', page: this.renderer.render('device-done', { title: allowed ? 'Device connected' : 'Device refused', clientName: client.name, allowed }) };
  }
}
