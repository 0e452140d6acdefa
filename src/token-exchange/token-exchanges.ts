import { Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import type { Client } from '../clients/client.entity.js';
import { ExchangeTokenType, TokenType } from '../common/oauth.constants.js';
import { Transactions } from '../database/transactions.js';
import { ResourceServersService } from '../resource-servers/resource-servers.service.js';
import { TokenKind, type Token } from '../tokens/token.entity.js';
import { TokensService, type IssuedTokens, type MintedTokens } from '../tokens/tokens.service.js';

/** Why a subject or actor token is refused: RFC 8693 §2.2.2 answers every such case invalid_request. */
export type Refusal = { refused: string };

/** What the audit trail keeps of an exchange: who, for whom, for what; never a token value. */
export interface ExchangeRecord {
  client: Client;
  subject: Token;
  target: readonly string[];
  scope: string;
  withActorToken: boolean;
}

const INVALID_SUBJECT = 'The subject_token is invalid, expired or revoked, or this client did not receive it';

/**
 * Token exchange (RFC 8693), the decisions that are not about the token endpoint's wire format:
 * which subject and actor tokens a client may present, and the recording of an exchange. The grant
 * (auth/grants/token-exchange.grant.ts) turns refusals into OAuth errors and mints the new token.
 */
@Injectable()
export class TokenExchanges {
  constructor(
    private readonly tokens: TokensService,
    private readonly servers: ResourceServersService,
    private readonly audit: AuditService,
    private readonly transactions: Transactions,
  ) {}

  /**
   * §2.1 subject_token: an active access token Latchkey issued for a person, which `client`
   * received legitimately: it was issued to `client`, or it is restricted (RFC 8707) to a resource
   * server whose registered introspector is `client` (the service the token was sent to). Anything
   * else is refused alike, so the answer tells a prober nothing about whose token it holds.
   */
  async subjectToken(client: Client, value: string, type: string): Promise<Token | Refusal> {
    if (type !== ExchangeTokenType.AccessToken) return { refused: `subject_token_type must be ${ExchangeTokenType.AccessToken}` };
    const token = await this.tokens.findByValue(value);
    if (!token || token.kind !== TokenKind.Access || !this.tokens.isActive(token)) return { refused: INVALID_SUBJECT };
    if (!(await this.received(client, token))) return { refused: INVALID_SUBJECT };
    // A token with no person (client_credentials) has no subject to act for: the client may ask for its own token instead.
    if (token.userId === null) return { refused: 'The subject_token does not represent a person; use the client_credentials grant for a token of your own' };
    // A MAC token is sender-constrained by its mac_key, and a token request has no way to prove
    // that key: exchanging it would hand a holder of the token alone a key of its own (RFC 9449 §7's
    // reasoning for DPoP; the grant asks a DPoP-bound token for a proof of its key instead).
    if (token.tokenType === TokenType.Mac) return { refused: 'A MAC token cannot be exchanged: a token request cannot prove its mac_key' };
    return token;
  }

  /**
   * §2.1 actor_token: optional; when sent, an active access token issued to `client` itself
   * (client_credentials), proving who acts. The issued token's act names `client` either way.
   */
  async actorToken(client: Client, value: string | undefined, type: string | undefined): Promise<Token | Refusal | undefined> {
    // §2.1: actor_token_type is REQUIRED with actor_token, and MUST NOT be sent without it.
    if (value === undefined) return type === undefined ? undefined : { refused: 'actor_token_type was sent without actor_token' };
    if (type !== ExchangeTokenType.AccessToken) return { refused: `actor_token_type must be ${ExchangeTokenType.AccessToken}` };
    const token = await this.tokens.findByValue(value);
    if (!token || token.kind !== TokenKind.Access || !this.tokens.isActive(token) || token.clientId !== client.id || token.userId !== null) {
      return { refused: 'The actor_token must be an active client_credentials access token issued to this client' };
    }
    return token;
  }

  /** Stores the exchanged token and its audit event in one transaction: both or neither. */
  issue(minted: MintedTokens, record: ExchangeRecord): Promise<IssuedTokens> {
    const tokenId = minted.rows[0].id;
    return this.transactions.run(async (manager) => {
      const issued = await this.tokens.store(minted, manager);
      await this.audit.record(
        {
          actor: `client:${record.client.id}`,
          action: 'token.exchanged',
          subject: `token:${tokenId}`,
          details: {
            subject_client: record.subject.clientId,
            acting_client: record.client.id,
            user: record.subject.userId,
            subject_token: `token:${record.subject.id}`,
            target: [...record.target],
            scope: record.scope,
            actor_token: record.withActorToken,
          },
        },
        manager,
      );
      return issued;
    });
  }

  /** Was `token` issued to `client`, or sent to a resource server `client` introspects for? One indexed read in the second case. */
  private async received(client: Client, token: Token): Promise<boolean> {
    if (token.clientId === client.id) return true;
    if (token.audience === null) return false;
    const remote = token.audience.split(' ').filter((uri) => uri !== this.servers.localResource);
    if (remote.length === 0) return false;
    return (await this.servers.findByUris(remote)).some((server) => server.introspectionClientId === client.id);
  }
}

/** Narrows a result of TokenExchanges to its refusal. */
export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'refused' in value;
}
