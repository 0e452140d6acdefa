import { Controller, Get, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { RequireScope } from '../access/require-access.decorator.js';
import type { UserTokenPrincipal } from '../access/token-principal.js';
import { OPENID_SCOPE } from '../scopes/scope-catalog.js';
import { UserInfoService, type UserInfo } from './userinfo.service.js';

type UserInfoRequest = FastifyRequest & { user: UserTokenPrincipal };

/**
 * OpenID Connect Core §5.3: GET and POST /userinfo, for an access token (bearer in the header or,
 * on POST, in the form body per RFC 6750 §2.2; or a MAC-signed request) that holds openid and
 * speaks for a person; refusals are RFC 6750 challenges (§5.3.3).
 */
@Controller('userinfo')
@RequireScope(OPENID_SCOPE, { resourceOwner: true, formBodyToken: true })
export class UserInfoController {
  constructor(private readonly userInfo: UserInfoService) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  get(@Req() request: UserInfoRequest): Promise<UserInfo> {
    return this.userInfo.claims(request.user);
  }

  @Post()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  post(@Req() request: UserInfoRequest): Promise<UserInfo> {
    return this.userInfo.claims(request.user);
  }
}
