/** SAML 2.0 names this server reads or writes, as the OASIS specifications spell them. */

/** SAML Bindings §3.4.1, §3.5.1: the bindings we send requests with and receive responses on. */
export const SAML_BINDING = {
  Redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  Post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const;

/** SAML Core §8.3: NameID formats. */
export const NAMEID_FORMAT = {
  Persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  Transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  Unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
} as const;

/** SAML Core §3.2.2.2: the top-level status of a successful response. */
export const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

/** SAML Profiles §3.3: the only subject confirmation method of Web Browser SSO (§4.1.4.2). */
export const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

/** SAML Metadata §2.2 and §2.4.1: the namespace of metadata and the protocol an IdP must support. */
export const METADATA_NS = 'urn:oasis:names:tc:SAML:2.0:metadata';
export const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
export const XMLDSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

/** SAML Metadata §4.1.1 (and RFC 7580's registration): the media type of a metadata document. */
export const SAML_METADATA_MEDIA_TYPE = 'application/samlmetadata+xml';

/** The parameters of the HTTP-Redirect and HTTP-POST bindings (SAML Bindings §3.4.4, §3.5.4). */
export const SAML_PARAMETER = { Request: 'SAMLRequest', Response: 'SAMLResponse', RelayState: 'RelayState' } as const;
