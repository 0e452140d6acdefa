import { errorDescription } from './error-description.js';

/** RFC 6749 §4.1.2.1 / §5.2: error_description = 1*( %x20-21 / %x23-5B / %x5D-7E ). */
const RFC_6749_CHARSET = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;

describe(errorDescription.name, () => {
  it('leaves a description that is already allowed exactly as it is', () => {
    const text = "The client assertion's aud must be the issuer (RFC 7523 3)";
    expect(errorDescription(text)).toBe(text);
  });

  it.each([
    ['Request objects (OpenID Connect Core §6.1) are not supported', 'Request objects (OpenID Connect Core section 6.1) are not supported'],
    ['must be "dpop+jwt" (§ 4.3)', "must be 'dpop+jwt' (section 4.3)"],
    ['e.g. \'{"keys":[…]}\'', "e.g. '{'keys':[...]}'"],
    ['a range 1–5 — or more → done', 'a range 1-5 - or more -> done'],
    ['C:\\path', 'C:/path'],
    ['Café résumé naïve', 'Cafe resume naive'],
    ['line one\nline two\ttab', 'line one line two tab'],
    ['emoji 🔑 and 中文 dropped', 'emoji  and  dropped'],
  ])('%j → %j, inside the RFC 6749 character set', (text, expected) => {
    expect(errorDescription(text)).toBe(expected);
    expect(errorDescription(text)).toMatch(RFC_6749_CHARSET);
  });
});
