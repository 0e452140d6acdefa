import { CONSOLE_CLIENT_ID } from './console-client-id.js';
import { isFirstPartyRequest } from './first-party.js';

describe(isFirstPartyRequest.name, () => {
  const issuer = 'https://id.example.com';

  it("is the console's client answered at its own callback under the issuer", () => {
    expect(isFirstPartyRequest({ clientId: CONSOLE_CLIENT_ID, redirectUri: 'https://id.example.com/admin/callback' }, issuer)).toBe(true);
  });

  it.each([
    ['another client at the console callback', 'console-lookalike', 'https://id.example.com/admin/callback'],
    ["the console's id sent elsewhere", CONSOLE_CLIENT_ID, 'https://elsewhere.example/admin/callback'],
    ["the console's id on another path of the issuer", CONSOLE_CLIENT_ID, 'https://id.example.com/admin/callback/x'],
    ["the console's id with a query added", CONSOLE_CLIENT_ID, 'https://id.example.com/admin/callback?next=1'],
    ["the console's id on another port", CONSOLE_CLIENT_ID, 'https://id.example.com:8443/admin/callback'],
    ["the console's id in another case", CONSOLE_CLIENT_ID.toUpperCase(), 'https://id.example.com/admin/callback'],
  ])('is not %s', (_, clientId, redirectUri) => {
    expect(isFirstPartyRequest({ clientId, redirectUri }, issuer)).toBe(false);
  });
});
