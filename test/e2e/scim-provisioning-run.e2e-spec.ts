import { TestApp } from '../helpers/test-app.js';
import { entra } from '../scim/entra-id.requests.js';
import { provisioningClient, ScimConnector } from '../scim/scim-client.js';

const PEOPLE = 1000;
const GROUPS = 50;
/** A connector's requests in flight at once (Entra ID and Okta each run a few in parallel). */
const PARALLEL = 8;

/**
 * A first provisioning run as Entra ID makes it: for each person, a lookup by userName, then the
 * create; for each group, a lookup by displayName, the create, then the members added in PATCHes.
 * The time is printed, not asserted.
 */
describe('a provisioning run of 1,000 people and 50 groups', () => {
  let app: TestApp;
  let scim: ScimConnector;

  beforeAll(async () => {
    app = await TestApp.start({ SCIM_RATE_LIMIT_PER_MINUTE: '0' });
    scim = new ScimConnector(app, (await provisioningClient(app)).token);
  });
  afterAll(async () => app?.stop());

  it('provisions everyone, and the directory reads back complete', async () => {
    const started = performance.now();
    const ids = await inBatches(Array.from({ length: PEOPLE }, (_, index) => index), async (index) => {
      const userName = `person.${String(index).padStart(4, '0')}@example.com`;
      expect((await scim.get(entra.filterByUserName(userName))).body.totalResults).toBe(0);
      const created = await scim.post('/Users', entra.createUser(userName, `ext-${index}`, userName));
      expect(created.status).toBe(201);
      return created.body.id as string;
    });
    const peopleDone = performance.now();
    await inBatches(Array.from({ length: GROUPS }, (_, index) => index), async (index) => {
      const displayName = `Team ${index}`;
      expect((await scim.get(entra.filterGroupByName(displayName))).body.totalResults).toBe(0);
      const group = await scim.post('/Groups', entra.createGroup(displayName, `ext-group-${index}`));
      // Each person in one team; Entra ID adds members in PATCHes of up to 20 (its batch size).
      const members = ids.filter((_, person) => person % GROUPS === index);
      for (let start = 0; start < members.length; start += 20) expect((await scim.patch(`/Groups/${group.body.id}`, entra.addMembers(...members.slice(start, start + 20)))).status).toBe(200);
    });
    const finished = performance.now();
    console.log(
      `SCIM provisioning run (${app.dataSource.options.type}): ${PEOPLE} people in ${Math.round(peopleDone - started)} ms, ` +
        `${GROUPS} groups with their members in ${Math.round(finished - peopleDone)} ms, total ${Math.round(finished - started)} ms ` +
        `(${PARALLEL} requests in flight; ${PEOPLE * 2 + GROUPS * 4} requests)`,
    );

    expect((await scim.get('/Users?count=1')).body.totalResults).toBe(PEOPLE);
    const groups = await scim.get('/Groups?count=100');
    expect(groups.body.totalResults).toBe(GROUPS);
    expect(groups.body.Resources.every((group: { members: unknown[] }) => group.members.length === PEOPLE / GROUPS)).toBe(true);
    const listed = performance.now();
    const everyone = await scim.get('/Users?startIndex=901&count=100&sortBy=userName');
    console.log(`SCIM listing a page of 100 of ${PEOPLE} people, sorted, with their groups: ${Math.round(performance.now() - listed)} ms`);
    expect(everyone.body.Resources[0].userName).toBe('person.0900@example.com');
    expect(everyone.body.Resources[0].groups).toHaveLength(1);
  }, 600_000);
});

async function inBatches<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]);
      }
    }),
  );
  return results;
}
