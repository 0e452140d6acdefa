import { Inject, Injectable } from '@nestjs/common';
import { uuidv7 } from '../../common/random.js';
import type { Client } from '../../clients/client.entity.js';
import { GrantType } from '../../common/oauth.constants.js';
import { formatScope, isSubset, parseScope, splitScope } from '../../common/scope.js';
import { legacyGrantsConfig, type LegacyGrantsConfig } from '../../config/legacy-grants.config.js';
import { ConsentsService } from '../../consents/consents.service.js';
import { LoginThrottle } from '../../rate-limit/login-throttle.service.js';
import { tooManyRequests } from '../../rate-limit/too-many-requests.js';
import { ScopeCatalog } from '../../scopes/scope-catalog.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { UsersService } from '../../users/users.service.js';
import { InvalidGrantError, InvalidRequestError, InvalidScopeError, UnauthorizedClientError } from '../errors/oauth-error.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import { JwtAccessTokens } from '../token/jwt-access-tokens.js';
import { toTokenResponse, type TokenResponse } from '../token/token-response.js';
import { ResourceIndicators } from '../resource-indicators.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';
import { GroupAccessRule, NOT_IN_REQUIRED_GROUP } from '../../groups/group-access-rule.js';
import { GrantSignInLevel } from './grant-sign-in-level.js';

/** RFC 6749 §4.3.2. */
export interface PasswordParameters {
  username: string;
  password: string;
  scope?: string;
  /** RFC 8707 §2: the resources the token is for. */
  resources?: string[];
}

/** What a refused password grant says when more than a password is required (RFC 6749 §5.2 error_description). */
const SECOND_FACTOR_NEEDED = 'A second factor is required for this client or this person, and a password grant cannot ask for one: use the browser flow (authorization code)';

/**
 * RFC 6749 §4.3, the resource owner password credentials grant, for confidential clients an
 * administrator registered for it (RFC 9700 §2.4 says MUST NOT otherwise; the dispatcher refuses
 * every other client with unauthorized_client). The person types their password into the client,
 * so there is no consent page: the administrator's opt-in stands for it, and the grant is recorded
 * as a consent so that the person sees it on /account/access and can withdraw it.
 */
@Injectable()
export class PasswordGrant implements GrantHandler<PasswordParameters> {
  readonly grantType = GrantType.Password;

  constructor(
    private readonly users: UsersService,
    private readonly throttle: LoginThrottle,
    private readonly tokens: TokensService,
    private readonly consents: ConsentsService,
    private readonly scopes: ScopeCatalog,
    @Inject(legacyGrantsConfig.KEY) private readonly config: LegacyGrantsConfig,
    private readonly resources: ResourceIndicators,
    private readonly jwtAccessTokens: JwtAccessTokens,
    private readonly signInLevel: GrantSignInLevel,
    private readonly groupAccess: GroupAccessRule,
  ) {}

  parameters(form: TokenRequestDto): PasswordParameters {
    // §4.3.2: username and password are REQUIRED.
    const username = form.username?.trim() ?? '';
    if (username === '') throw new InvalidRequestError('The username parameter is required');
    if (form.password === undefined) throw new InvalidRequestError('The password parameter is required');
    return { username, password: form.password, scope: form.scope, resources: this.resources.parse(form.resource) };
  }

  async handle({ username, password, scope: requestedScope, resources }: PasswordParameters, { client, clientAddress, dpopJkt }: GrantContext): Promise<TokenResponse> {
    // Registration refuses it already; a public client has proved nothing, so anyone could guess passwords through it.
    if (client.isPublic) throw new UnauthorizedClientError('Only a confidential client may use the password grant');
    const scope = this.resolveScope(requestedScope, client);
    const audience = resources === undefined ? undefined : await this.resources.resolve(resources);

    // The same counters as the sign-in form (LoginThrottle), so a wait earned on one applies to the
    // other: RFC 6749 §4.3.2 asks for protection against brute force at this endpoint.
    const address = clientAddress();
    const wait = await this.throttle.begin(address, username);
    if (wait > 0) throw tooManyRequests(wait, 'Too many failed sign-ins for this username from this address.');
    // An unknown username costs the same argon2id verification as a wrong password (UsersService):
    // the answer and its timing say nothing about which one it was.
    const user = await this.users.authenticate(username, password);
    if (!user) throw new InvalidGrantError('The username or password is incorrect');
    await this.throttle.succeeded(address, username);
    // A password is all this grant can prove (urn:latchkey:acr:pwd): where the client's floor or the
    // person's requirement asks for more, or the person has a second factor, refuse before anything is written. invalid_grant (§5.2):
    // these resource owner credentials are not enough to authorize the grant. Not unauthorized_client,
    // which blames the client's registration where a person's requirement refuses one person only:
    // one answer for both tells the client to send the person to the browser flow, which can ask.
    if (!(await this.signInLevel.passwordAloneSuffices(client, user))) throw new InvalidGrantError(SECOND_FACTOR_NEEDED);
    // Issue 46: the client's group rule holds here as at the authorization endpoint (GroupAccessRule); no query unless it requires groups.
    if (!(await this.groupAccess.allows(client, user.id))) throw new InvalidGrantError(NOT_IN_REQUIRED_GROUP);

    await this.consents.grant(user.id, client.id, scope);
    const refresh = this.config.passwordGrantRefreshTokens && client.grantTypes.includes(GrantType.RefreshToken);
    const issued = await this.tokens.issue({
      familyId: uuidv7(),
      clientId: client.id,
      userId: user.id,
      scope: formatScope(scope),
      refreshScope: refresh ? formatScope(scope) : undefined,
      tokenType: client.accessTokenType,
      // The password grant is for confidential clients only: its refresh token stays unbound (RFC 9449 §5).
      dpop: dpopJkt === undefined ? undefined : { jkt: dpopJkt, bindRefreshToken: false },
      ...this.jwtAccessTokens.restrictedTo(audience, client),
      refreshAudience: audience?.uris,
    });
    return toTokenResponse(issued);
  }

  /** §3.3: the requested scope within the client's data scopes (the ones a person can grant), or all of them. */
  private resolveScope(value: string | undefined, client: Client): string[] {
    const grantable = splitScope(client.scope).filter((s) => this.scopes.isDataScope(s));
    if (value === undefined) return grantable;
    const requested = parseScope(value);
    if (requested === undefined) throw new InvalidScopeError('The scope parameter is malformed');
    if (!isSubset(requested, grantable)) throw new InvalidScopeError('The requested scope is not allowed for this client');
    return requested;
  }
}
