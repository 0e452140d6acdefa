import { Client } from '../clients/client.entity.js';
import { AuthorizationCode } from '../codes/authorization-code.entity.js';
import { Consent } from '../consents/consent.entity.js';
import { AuditEvent } from '../audit/audit-event.entity.js';
import { Item } from '../items/item.entity.js';
import { ServerKey } from '../keys/server-key.entity.js';
import { MacNonce } from '../tokens/mac-nonce.entity.js';
import { JtiUse } from '../replay/jti-use.entity.js';
import { ResourceServer } from '../resource-servers/resource-server.entity.js';
import { SessionClient } from '../sessions/session-client.entity.js';
import { Session } from '../sessions/session.entity.js';
import { LogoutDelivery } from '../logout/logout-delivery.entity.js';
import { SigningKey } from '../signing/signing-key.entity.js';
import { Token } from '../tokens/token.entity.js';
import { User } from '../users/user.entity.js';
import { RecoveryCode } from '../factors/recovery-code.entity.js';
import { TotpFactor } from '../factors/totp-factor.entity.js';
import { PushedAuthorizationRequest } from '../pushed-requests/pushed-request.entity.js';
import { PasskeyChallenge } from '../passkeys/passkey-challenge.entity.js';
import { Passkey } from '../factors/passkey.entity.js';
import { IdempotencyKey } from '../idempotency/idempotency-key.entity.js';
import { DeviceAuthorization } from '../device-codes/device-authorization.entity.js';
import { IdentityProvider } from '../identity-providers/identity-provider.entity.js';
import { UpstreamLink } from '../identity-providers/upstream-link.entity.js';
import { UpstreamSession } from '../identity-providers/upstream-session.entity.js';
import { SamlHandoff } from '../federation/saml/saml-handoff.entity.js';

/** Every entity, listed explicitly (no globs: the same list works compiled, under Jest and in the CLI). */
export const ENTITIES = [User, Client, AuthorizationCode, Token, Consent, ServerKey, Item, AuditEvent, MacNonce, Session, SigningKey, SessionClient, LogoutDelivery, PushedAuthorizationRequest, JtiUse, ResourceServer, TotpFactor, RecoveryCode, Passkey, PasskeyChallenge, IdempotencyKey, DeviceAuthorization, IdentityProvider, UpstreamLink, UpstreamSession, SamlHandoff];
