import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InteractionExceptionFilter } from '../../auth/errors/interaction-exception.filter.js';
import { sendOutcome, type InteractionOutcome } from '../../auth/interaction/interaction-responder.js';
import { CrossSiteEntry } from '../../http/cookie-forms.js';
import { SAML_METADATA_MEDIA_TYPE } from './saml-names.js';
import { SamlLogoutEndpoint, type SloMessage } from './saml-logout.service.js';
import { SamlSignIn, type AcsForm } from './saml-sign-in.service.js';

/** Our SAML 2.0 service provider's endpoints, one set per upstream SAML identity provider (`:idp`). */
@Controller('federation')
@UseFilters(InteractionExceptionFilter)
export class SamlController {
  constructor(
    private readonly saml: SamlSignIn,
    private readonly logout: SamlLogoutEndpoint,
  ) {}

  /** Our SP metadata (SAML Metadata §2.4.4), which the IdP's administrator imports; also our entity ID. */
  @Get(':idp/saml/metadata')
  async metadata(@Param('idp') idp: string, @Res() reply: FastifyReply): Promise<void> {
    sendMetadata(reply, await this.saml.metadata(idp));
  }

  /**
   * The Assertion Consumer Service: the IdP's page posts the response here from its own origin, by
   * design (SAML Bindings §3.5). It reads no cookie (a cross-site POST brings no Lax cookie) and
   * ends in a redirect to the GET below, which does what needs the cookie.
   */
  @CrossSiteEntry('SAML 2.0 Bindings §3.5 (HTTP POST binding), Profiles §4.1.4')
  @Post(':idp/saml/acs')
  async acs(@Param('idp') idp: string, @Body() form: AcsForm, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.saml.acs(idp, form ?? {}));
  }

  /** Single Logout (SAML Profiles §4.4) by the HTTP-Redirect binding: the IdP's LogoutResponse to ours, or its own LogoutRequest. */
  @Get(':idp/saml/slo')
  async sloRedirect(@Req() request: FastifyRequest, @Param('idp') idp: string, @Query() query: SloMessage, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.logout.redirected(request, idp, query ?? {}));
  }

  /**
   * Single Logout by the HTTP-POST binding, which the IdP's page posts from its own origin by design
   * (Okta answers so). It reads no cookie: a LogoutResponse bounces to a GET that does, and a
   * LogoutRequest names the sessions to end itself.
   */
  @CrossSiteEntry('SAML 2.0 Bindings §3.5 (HTTP POST binding), Profiles §4.4')
  @Post(':idp/saml/slo')
  async sloPost(@Param('idp') idp: string, @Body() form: SloMessage, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.logout.posted(idp, form ?? {}));
  }

  /** Where the ACS sends the browser with its verified answer: a top-level GET, which carries the session cookie. */
  @Get(':idp/saml/complete')
  async complete(@Req() request: FastifyRequest, @Param('idp') idp: string, @Query() query: { handle?: unknown }, @Res() reply: FastifyReply): Promise<void> {
    sendOutcome(reply, await this.saml.complete(request, idp, query ?? {}));
  }
}

function sendMetadata(reply: FastifyReply, answer: { xml: string } | InteractionOutcome): void {
  if (!('xml' in answer)) {
    sendOutcome(reply, answer);
    return;
  }
  void reply.header('Content-Type', `${SAML_METADATA_MEDIA_TYPE}; charset=utf-8`).header('Cache-Control', 'public, max-age=3600').send(answer.xml);
}
