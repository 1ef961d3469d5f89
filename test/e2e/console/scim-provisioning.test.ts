/**
 * SCIM 2.0 provisioning over the wire: an account's directory creates, finds, updates, deactivates and deletes its
 * people (members) and groups (roles and project memberships) with the account's SCIM token, in the PATCH forms Okta
 * and Entra ID send.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleClient } from '../../support/console-client.js';
import { strongPassword } from '../../support/console-client.js';
import { startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

let setup: ConsoleGateway;
let owner: ConsoleClient;
let ownerEmail: string;
let accountId: string;
let token: string;
const domain = `dir-${randomBytes(3).toString('hex')}.test`;

async function scim<T = Record<string, unknown>>(method: string, path: string, body?: unknown, bearer: string | null = token): Promise<{ status: number; body: T; type: string }> {
  const response = await fetch(`${setup.gateway.url}/scim/v2${path}`, {
    method,
    headers: { ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }), ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as T, type: response.headers.get('content-type') ?? '' };
}

async function roleOf(email: string): Promise<string | null> {
  const members = await owner.request<{ data: Array<{ email: string; role: string }> }>('GET', '/api/members');
  expect(members.status, members.text).toBe(200);
  return members.body.data.find((member) => member.email === email)?.role ?? null;
}

async function accountWithSso(email: string, domains: string[]): Promise<{ accountId: string; client: ConsoleClient }> {
  const password = strongPassword();
  const account = await setup.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email, password });
  expect(account.status).toBe(201);
  const client = setup.client();
  expect((await client.signIn(email, password)).status).toBe(200);
  // The connection itself is set up through the console in single-sign-on.test.ts (against a real provider).
  await setup.gateway.gateway.services.storage.sso.saveConnection({
    id: `sso_${randomBytes(6).toString('hex')}`, owner: account.body.id, issuer: 'https://idp.example.com', clientId: 'console', clientSecret: 'secret',
    emailDomains: domains, requireSso: false, jitRole: 'viewer', roleClaim: 'groups', roleMap: {
      Engineering: 'developer', Admins: 'admin', 'Search Team': 'project:Search:developer', 'Search Readers': 'project:Search', Gone: 'project:No such project',
    }, enabled: true,
  }, Date.now());
  return { accountId: account.body.id, client };
}

beforeAll(async () => {
  setup = await startConsoleGateway();
  ownerEmail = `owner@${domain}`;
  const made = await accountWithSso(ownerEmail, [domain]);
  owner = made.client;
  accountId = made.accountId;
  const issued = await owner.request<{ token: string; scim_base_url: string }>('POST', '/api/sso/scim-token');
  expect(issued.status, issued.text).toBe(201);
  token = issued.body.token;
  expect(issued.body.scim_base_url).toBe(`${setup.gateway.url}/scim/v2`);
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

describe('SCIM provisioning', () => {
  it('shows the token once and refuses calls without it', async () => {
    const settings = await owner.request<{ connection: { scim_enabled: boolean } }>('GET', '/api/sso');
    expect(settings.body.connection.scim_enabled).toBe(true);
    expect(JSON.stringify(settings.body)).not.toContain(token);
    for (const bearer of [null, 'scim_wrong', token.slice(0, -2)]) {
      const refused = await scim('GET', '/Users', undefined, bearer);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401' });
    }
    expect((await scim('GET', '/ServiceProviderConfig')).body).toMatchObject({ patch: { supported: true }, filter: { supported: true } });
  });

  it('provisions a member, finds them by userName, and keeps other domains and duplicates out', async () => {
    const email = `ann@${domain}`;
    const created = await scim<{ id: string; userName: string; active: boolean; displayName: string }>('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `Ann@${domain}`, name: { givenName: 'Ann', familyName: 'Lee' },
      emails: [{ value: `ann@${domain}`, primary: true, type: 'work' }], externalId: '00u1', active: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.type).toContain('application/scim+json');
    expect(created.body).toMatchObject({ userName: email, active: true, displayName: 'Ann Lee' });
    expect(await roleOf(email)).toBe('viewer');

    const found = await scim<{ totalResults: number; Resources: Array<{ id: string }> }>('GET', `/Users?filter=${encodeURIComponent(`userName eq "ANN@${domain}"`)}`);
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0]?.id).toBe(created.body.id);
    const none = await scim<{ totalResults: number; Resources: unknown[] }>('GET', `/Users?filter=${encodeURIComponent('userName eq "nobody@x.test"')}`);
    expect(none.body).toMatchObject({ totalResults: 0, Resources: [] });
    expect((await scim('GET', `/Users?filter=${encodeURIComponent('emails co "x"')}`)).body).toMatchObject({ scimType: 'invalidFilter' });

    expect((await scim('POST', '/Users', { userName: email })).body).toMatchObject({ status: '409', scimType: 'uniqueness' });
    expect((await scim('POST', '/Users', { userName: 'someone@elsewhere.test' })).status).toBe(400);
  });

  it('gives roles through groups (Entra ID and Okta PATCH forms) and never touches the owner', async () => {
    const email = `ann@${domain}`;
    const ann = (await scim<{ Resources: Array<{ id: string }> }>('GET', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`)).body.Resources[0]?.id as string;
    const engineering = await scim<{ id: string; members: Array<{ value: string }> }>('POST', '/Groups', { displayName: 'Engineering', members: [{ value: ann }] });
    expect(engineering.status).toBe(201);
    expect(engineering.body.members.map((member) => member.value)).toEqual([ann]);
    expect(await roleOf(email)).toBe('developer');

    const admins = await scim<{ id: string }>('POST', '/Groups', { displayName: 'Admins', members: [] });
    // Entra ID: add with a members list.
    expect((await scim('PATCH', `/Groups/${admins.body.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Add', path: 'members', value: [{ value: ann }] }] })).status).toBe(200);
    expect(await roleOf(email)).toBe('admin');
    // Okta: remove with a filtered path.
    expect((await scim('PATCH', `/Groups/${admins.body.id}`, { Operations: [{ op: 'remove', path: `members[value eq "${ann}"]` }] })).status).toBe(200);
    expect(await roleOf(email)).toBe('developer');
    // Okta: rename through a value object; the role follows the name.
    expect((await scim('PATCH', `/Groups/${engineering.body.id}`, { Operations: [{ op: 'replace', value: { id: engineering.body.id, displayName: 'Contractors' } }] })).status).toBe(200);
    expect(await roleOf(email)).toBe('viewer');
    expect((await scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Contractors"')}&excludedAttributes=members`)).body).toMatchObject({ totalResults: 1 });

    // The owner, provisioned and put in Admins, stays the owner.
    const ownerScim = await scim<{ id: string }>('POST', '/Users', { userName: ownerEmail });
    await scim('PATCH', `/Groups/${admins.body.id}`, { Operations: [{ op: 'add', path: 'members', value: [{ value: ownerScim.body.id }] }] });
    expect(await roleOf(ownerEmail)).toBe('owner');
    expect((await scim('PATCH', `/Users/${ownerScim.body.id}`, { Operations: [{ op: 'replace', value: { active: false } }] })).status).toBe(200);
    expect(await roleOf(ownerEmail)).toBe('owner');
  });

  it('deactivation ends the membership; reactivation and deletion follow', async () => {
    const email = `ben@${domain}`;
    const ben = await scim<{ id: string }>('POST', '/Users', { userName: email, active: true });
    expect(await roleOf(email)).toBe('viewer');
    const services = setup.gateway.gateway.services;
    const user = await services.storage.console.getUserByEmail(email);
    // Okta deactivates with a value object.
    const off = await scim<{ active: boolean }>('PATCH', `/Users/${ben.body.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(off.body.active).toBe(false);
    expect(await roleOf(email)).toBeNull();
    expect(await services.storage.console.getMembership(accountId, user?.id ?? '')).toBeNull();
    // Entra ID reactivates with a path and a string boolean.
    const on = await scim<{ active: boolean }>('PATCH', `/Users/${ben.body.id}`, { Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
    expect(on.body.active).toBe(true);
    expect(await roleOf(email)).toBe('viewer');
    expect((await scim('DELETE', `/Users/${ben.body.id}`)).status).toBe(204);
    expect(await roleOf(email)).toBeNull();
    expect((await scim('GET', `/Users/${ben.body.id}`)).status).toBe(404);
  });

  it('puts people in projects through the groups the role map names project:<name>[:<role>]', async () => {
    const search = await owner.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'Search' });
    expect(search.status, search.text).toBe(201);
    const other = await owner.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'Billing tools' });
    const searchId = search.body.project.id;
    const projectRoles = async (email: string): Promise<Record<string, string>> => {
      const roles: Record<string, string> = {};
      for (const projectId of [searchId, other.body.project.id]) {
        const members = await owner.request<{ data: Array<{ email: string; role: string }> }>('GET', `/api/projects/${projectId}/members`);
        expect(members.status, members.text).toBe(200);
        const role = members.body.data.find((member) => member.email === email)?.role;
        if (role !== undefined) roles[projectId] = role;
      }
      return roles;
    };

    const email = `cleo@${domain}`;
    const cleo = await scim<{ id: string }>('POST', '/Users', { userName: email });
    expect(cleo.status).toBe(201);
    const cleoUser = await setup.gateway.gateway.services.storage.console.getUserByEmail(email);
    // A project membership given in the console, in a project the role map does not name, is the console's to keep.
    expect((await owner.request('PUT', `/api/projects/${other.body.project.id}/members/${cleoUser?.id}`, { role: 'viewer' })).status).toBe(200);

    const readers = await scim<{ id: string }>('POST', '/Groups', { displayName: 'Search Readers', members: [{ value: cleo.body.id }] });
    expect(readers.status).toBe(201);
    expect(await projectRoles(email)).toEqual({ [searchId]: 'viewer', [other.body.project.id]: 'viewer' });
    // The project grant does not raise the account role.
    expect(await roleOf(email)).toBe('viewer');

    // Entra ID adds her to the team group: the higher project role wins.
    const team = await scim<{ id: string }>('POST', '/Groups', { displayName: 'Search Team', members: [] });
    expect((await scim('PATCH', `/Groups/${team.body.id}`, { Operations: [{ op: 'Add', path: 'members', value: [{ value: cleo.body.id }] }] })).status).toBe(200);
    expect(await projectRoles(email)).toEqual({ [searchId]: 'developer', [other.body.project.id]: 'viewer' });

    // A group mapped to a project the account does not have grants nothing.
    const gone = await scim<{ id: string }>('POST', '/Groups', { displayName: 'Gone', members: [{ value: cleo.body.id }] });
    expect(gone.status).toBe(201);
    expect(await projectRoles(email)).toEqual({ [searchId]: 'developer', [other.body.project.id]: 'viewer' });

    // Okta removes her from the team: back to viewer; out of the readers group too: out of the project.
    expect((await scim('PATCH', `/Groups/${team.body.id}`, { Operations: [{ op: 'remove', path: `members[value eq "${cleo.body.id}"]` }] })).status).toBe(200);
    expect(await projectRoles(email)).toEqual({ [searchId]: 'viewer', [other.body.project.id]: 'viewer' });
    expect((await scim('DELETE', `/Groups/${readers.body.id}`)).status).toBe(204);
    expect(await projectRoles(email)).toEqual({ [other.body.project.id]: 'viewer' });

    // Deactivation ends the project memberships the directory manages, with the account membership.
    expect((await scim('PATCH', `/Groups/${team.body.id}`, { Operations: [{ op: 'add', path: 'members', value: [{ value: cleo.body.id }] }] })).status).toBe(200);
    expect(await projectRoles(email)).toEqual({ [searchId]: 'developer', [other.body.project.id]: 'viewer' });
    expect((await scim('PATCH', `/Users/${cleo.body.id}`, { Operations: [{ op: 'replace', path: 'active', value: 'False' }] })).status).toBe(200);
    expect(await projectRoles(email)).toEqual({ [other.body.project.id]: 'viewer' });
  });

  it('keeps one account\'s directory out of another\'s people', async () => {
    const otherDomain = `other-${randomBytes(3).toString('hex')}.test`;
    const other = await accountWithSso(`boss@${otherDomain}`, [otherDomain]);
    const otherToken = (await other.client.request<{ token: string }>('POST', '/api/sso/scim-token')).body.token;
    const ann = (await scim<{ Resources: Array<{ id: string }> }>('GET', `/Users?filter=${encodeURIComponent(`userName eq "ann@${domain}"`)}`)).body.Resources[0]?.id as string;
    expect((await scim('GET', `/Users/${ann}`, undefined, otherToken)).status).toBe(404);
    expect((await scim('DELETE', `/Users/${ann}`, undefined, otherToken)).status).toBe(404);
    expect((await scim<{ totalResults: number }>('GET', '/Users', undefined, otherToken)).body.totalResults).toBe(0);
    // A group of the other account naming ann's id does not reach her.
    const group = await scim<{ members: unknown[] }>('POST', '/Groups', { displayName: 'Admins', members: [{ value: ann }] }, otherToken);
    expect(group.body.members).toEqual([]);
    expect(await roleOf(`ann@${domain}`)).toBe('viewer');
    // A token replaced is dead at once.
    const replaced = (await other.client.request<{ token: string }>('POST', '/api/sso/scim-token')).body.token;
    expect((await scim('GET', '/Users', undefined, otherToken)).status).toBe(401);
    expect((await scim('GET', '/Users', undefined, replaced)).status).toBe(200);

    // A deleted account's token stops working and its domain is free for another account.
    expect((await setup.gateway.admin('DELETE', `/admin/accounts/${other.accountId}`)).status).toBeLessThan(300);
    expect((await scim('GET', '/Users', undefined, replaced)).status).toBe(401);
    const next = await accountWithSso(`new-boss@${otherDomain}`, [otherDomain]);
    expect((await setup.gateway.gateway.services.storage.sso.getConnectionByDomain(otherDomain))?.owner).toBe(next.accountId);
  });
});
