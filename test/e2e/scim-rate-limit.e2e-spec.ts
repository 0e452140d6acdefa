import { TestApp } from '../helpers/test-app.js';
import { clientToken, provisioningClient, ScimConnector } from '../scim/scim-client.js';

/** SCIM_RATE_LIMIT_PER_MINUTE: per provisioning client, whatever token it uses; 429 in SCIM's error shape. */
describe('SCIM rate limit', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start({ SCIM_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => app?.stop());

  it('counts per client across its tokens, and answers 429 with Retry-After', async () => {
    const { client, token } = await provisioningClient(app);
    const first = new ScimConnector(app, token);
    for (let i = 0; i < 2; i++) expect((await first.get('/Users')).status).toBe(200);
    const second = new ScimConnector(app, await clientToken(app, client, 'scim'));
    expect((await second.get('/Users')).status).toBe(200);
    const refused = await second.get('/Users');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '429' });
    // Another connector has its own budget.
    expect((await new ScimConnector(app, (await provisioningClient(app)).token).get('/Users')).status).toBe(200);
  });
});
