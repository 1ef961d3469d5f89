import { GatewayError } from '../errors/gateway-error.js';
import { isUniqueViolation } from '../http/admin/admin-guard.js';
import { readBody } from '../http/read-body.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';
import { sendRaw } from '../http/respond.js';
import type { Router } from '../http/router.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import type { ScimUser } from '../storage/repositories/scim-repository.js';
import type { SsoConnection } from '../storage/repositories/sso-repository.js';
import { hashToken } from '../console/secret-token.js';
import { emailDomain, mappedRole } from '../console/sso/sso-connections.js';
import { NO_PASSWORD, SSO_ACCOUNT_ROLES } from '../console/sso/sso-identity.js';
import { syncDirectoryProjects } from '../projects/directory-projects.js';
import {
  errorJson, groupJson, listJson, pageOf, parseEqualityFilter, patchOperations, scimBoolean, ScimError, SCIM_CONTENT_TYPE, userJson,
} from './scim-wire.js';

const PREFIX = '/scim/v2';
const MAX_BODY_BYTES = 256 * 1024;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface ScimRequest {
  context: RequestContext;
  connection: SsoConnection;
  accountId: string;
  baseUrl: string;
}

function send(context: RequestContext, status: number, value: unknown): void {
  sendRaw(context, status, JSON.stringify(value), SCIM_CONTENT_TYPE, { 'cache-control': 'no-store' });
}

async function readJson(context: RequestContext): Promise<Record<string, unknown>> {
  let body: Buffer;
  try {
    body = await readBody(context, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof GatewayError) throw new ScimError(error.status, error.message, 'invalidSyntax');
    throw error;
  }
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new ScimError(400, 'The body must be a JSON object.', 'invalidSyntax');
}

function optionalText(value: unknown, what: string, max = 400): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > max) throw new ScimError(400, `${what} must be a string of at most ${max} characters.`, 'invalidValue');
  return value;
}

/** The display name a directory sends: `displayName`, or `name.formatted`, or given and family names. */
function displayNameOf(body: Record<string, unknown>): string | null {
  const direct = optionalText(body.displayName, 'displayName');
  if (direct !== null) return direct;
  const name = (body.name ?? {}) as Record<string, unknown>;
  const formatted = optionalText(name.formatted, 'name.formatted');
  if (formatted !== null) return formatted;
  const parts = [optionalText(name.givenName, 'name.givenName'), optionalText(name.familyName, 'name.familyName')].filter((part) => part !== null);
  return parts.length === 0 ? null : parts.join(' ');
}

/**
 * SCIM 2.0 provisioning of an account's people from its directory (Okta, Entra ID, …), on the API listener under
 * /scim/v2 with the account's SCIM bearer token. Users are members: creating one makes the person a member,
 * deactivating or deleting one ends the membership (and its sessions). Groups give roles: a member's role is the
 * highest the account's role map gives any of their groups' names, else the connection's first-sign-in role, else
 * viewer. Owners are never changed. Role-map values `project:<id or name>[:<role>]` give project memberships instead. People outside the account's SSO domains are refused.
 */
export function addScimRoutes(router: Router, services: GatewayServices): void {
  const { storage, clock } = services;

  const route = (handler: (request: ScimRequest) => Promise<void>): RouteHandler => async (context) => {
    try {
      const header = context.request.headers.authorization ?? '';
      const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
      const connection = token === undefined || token.length > 200 ? null : await storage.sso.getConnectionByScimTokenHash(hashToken(token));
      if (connection === null || connection.owner === 'operator') throw new ScimError(401, 'A valid SCIM bearer token is required.');
      const account = await storage.accounts.getById(connection.owner);
      if (account === null || account.status !== 'enabled') throw new ScimError(403, 'This account is disabled.');
      // Resource locations: API_PUBLIC_URL, else the address the directory called.
      const origin = services.config.apiPublicUrl ?? `http://${context.request.headers.host ?? '127.0.0.1'}`;
      await handler({ context, connection, accountId: connection.owner, baseUrl: `${origin}${PREFIX}` });
    } catch (error) {
      if (!(error instanceof ScimError)) throw error;
      send(context, error.status, errorJson(error));
    }
  };

  /** Applies what the user's state and groups decide to their membership. */
  const syncMembership = async (connection: SsoConnection, user: ScimUser): Promise<void> => {
    let role: (typeof SSO_ACCOUNT_ROLES)[number] | null = null;
    let groups: string[] | null = null;
    if (user.active) {
      groups = await storage.scim.groupNamesOf(user.id);
      role = mappedRole(groups, connection.roleMap, SSO_ACCOUNT_ROLES) ?? SSO_ACCOUNT_ROLES.find((known) => known === connection.jitRole) ?? 'viewer';
    }
    const now = clock.now();
    await storage.scim.setMembership(user.accountId, user.userId, role, now);
    await syncDirectoryProjects(storage.projects, user.accountId, user.userId, groups, connection.roleMap, now);
  };
  const syncUsers = async (connection: SsoConnection, accountId: string, ids: Iterable<string>): Promise<void> => {
    for (const id of new Set(ids)) {
      const user = await storage.scim.getUser(accountId, id);
      if (user !== null) await syncMembership(connection, user);
    }
  };
  const userAnswer = async (request: ScimRequest, user: ScimUser): Promise<Record<string, unknown>> => {
    const names = await storage.scim.groupNamesOf(user.id);
    const groups = (await storage.scim.listGroups(request.accountId, 0, 200, null)).items.filter((group) => names.includes(group.displayName));
    return userJson(user, groups, request.baseUrl);
  };
  const memberNames = async (accountId: string, ids: string[]): Promise<Map<string, string>> => {
    const names = new Map<string, string>();
    for (const id of ids) {
      const user = await storage.scim.getUser(accountId, id);
      if (user !== null) names.set(id, user.userName);
    }
    return names;
  };
  const checkUserName = (connection: SsoConnection, value: unknown): string => {
    if (typeof value !== 'string' || !EMAIL.test(value.trim()) || value.length > 254) throw new ScimError(400, 'userName must be an email address.', 'invalidValue');
    const userName = value.trim().toLowerCase();
    if (!connection.emailDomains.includes(emailDomain(userName))) throw new ScimError(400, `${emailDomain(userName)} is not one of this account's single sign-on domains.`, 'invalidValue');
    return userName;
  };
  const getUser = async (request: ScimRequest): Promise<ScimUser> => {
    const user = await storage.scim.getUser(request.accountId, request.context.params.id ?? '');
    if (user === null) throw new ScimError(404, 'No such user.', 'noTarget');
    return user;
  };

  router.add('GET', `${PREFIX}/ServiceProviderConfig`, route(async ({ context }) => {
    send(context, 200, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
      patch: { supported: true }, bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 }, filter: { supported: true, maxResults: 200 },
      changePassword: { supported: false }, sort: { supported: false }, etag: { supported: false },
      authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: 'The SCIM token from the console\'s Single sign-on page.' }],
    });
  }));

  router.add('GET', `${PREFIX}/Users`, route(async (request) => {
    const filter = parseEqualityFilter(request.context.query.get('filter'), ['userName']);
    const { startIndex, count } = pageOf(request.context.query);
    const page = await storage.scim.listUsers(request.accountId, startIndex - 1, count, filter === null ? null : filter.value.toLowerCase());
    send(request.context, 200, listJson(await Promise.all(page.items.map((user) => userAnswer(request, user))), page.total, startIndex));
  }));

  router.add('POST', `${PREFIX}/Users`, route(async (request) => {
    const body = await readJson(request.context);
    const userName = checkUserName(request.connection, body.userName);
    const active = body.active === undefined ? true : scimBoolean(body.active, 'active');
    if ((await storage.scim.listUsers(request.accountId, 0, 1, userName)).total > 0) throw new ScimError(409, `${userName} is provisioned already.`, 'uniqueness');
    const now = clock.now();
    let consoleUser = await storage.console.getUserByEmail(userName);
    if (consoleUser === null) {
      consoleUser = {
        id: newId('usr', now), email: userName, passwordHash: NO_PASSWORD, emailVerifiedAt: now,
        totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: now, updatedAt: now,
      };
      try {
        await storage.console.createUser(consoleUser, { accountId: request.accountId, userId: consoleUser.id, role: 'viewer', createdAt: now });
      } catch (error) {
        if (isUniqueViolation(error)) throw new ScimError(409, `${userName} was created at the same moment.`, 'uniqueness');
        throw error;
      }
    }
    const user: ScimUser = {
      id: newId('scim', now), accountId: request.accountId, userId: consoleUser.id, userName,
      externalId: optionalText(body.externalId, 'externalId'), displayName: displayNameOf(body), active, createdAt: now, updatedAt: now,
    };
    try {
      await storage.scim.createUser(user);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ScimError(409, `${userName} is provisioned already.`, 'uniqueness');
      throw error;
    }
    await syncMembership(request.connection, user);
    send(request.context, 201, await userAnswer(request, user));
  }));

  router.add('GET', `${PREFIX}/Users/:id`, route(async (request) => {
    send(request.context, 200, await userAnswer(request, await getUser(request)));
  }));

  router.add('PUT', `${PREFIX}/Users/:id`, route(async (request) => {
    const user = await getUser(request);
    const body = await readJson(request.context);
    const updated = await storage.scim.updateUser(request.accountId, user.id, {
      userName: checkUserName(request.connection, body.userName), externalId: optionalText(body.externalId, 'externalId'),
      displayName: displayNameOf(body), active: body.active === undefined ? true : scimBoolean(body.active, 'active'),
    }, clock.now());
    if (updated === null) throw new ScimError(404, 'No such user.', 'noTarget');
    await syncMembership(request.connection, updated);
    send(request.context, 200, await userAnswer(request, updated));
  }));

  // PATCH as Okta sends it (no path, a value object) and as Entra ID does (a path per attribute, "True"/"False").
  router.add('PATCH', `${PREFIX}/Users/:id`, route(async (request) => {
    const user = await getUser(request);
    const patch: Parameters<typeof storage.scim.updateUser>[2] = {};
    const apply = (attribute: string, value: unknown, remove: boolean): void => {
      switch (attribute.toLowerCase()) {
        case 'active': patch.active = remove ? false : scimBoolean(value, 'active'); break;
        case 'username': if (!remove) patch.userName = checkUserName(request.connection, value); break;
        case 'displayname': patch.displayName = remove ? null : optionalText(value, 'displayName'); break;
        case 'externalid': patch.externalId = remove ? null : optionalText(value, 'externalId'); break;
        case 'name': if (!remove && value !== null && typeof value === 'object') patch.displayName = displayNameOf({ name: value }) ?? patch.displayName ?? null; break;
        default: break; // Attributes the gateway does not keep (titles, phone numbers, …) are accepted and ignored.
      }
    };
    for (const operation of patchOperations(await readJson(request.context))) {
      if (operation.path === null) {
        if (operation.value === null || typeof operation.value !== 'object') throw new ScimError(400, 'An operation without a path needs an object value.', 'invalidSyntax');
        for (const [attribute, value] of Object.entries(operation.value as Record<string, unknown>)) apply(attribute, value, operation.op === 'remove');
      } else {
        apply(operation.path.startsWith('name.') ? 'ignored' : operation.path, operation.value, operation.op === 'remove');
      }
    }
    const updated = await storage.scim.updateUser(request.accountId, user.id, patch, clock.now());
    if (updated === null) throw new ScimError(404, 'No such user.', 'noTarget');
    await syncMembership(request.connection, updated);
    send(request.context, 200, await userAnswer(request, updated));
  }));

  router.add('DELETE', `${PREFIX}/Users/:id`, route(async (request) => {
    const user = await getUser(request);
    await storage.scim.setMembership(request.accountId, user.userId, null, clock.now());
    await syncDirectoryProjects(storage.projects, request.accountId, user.userId, null, request.connection.roleMap, clock.now());
    await storage.scim.deleteUser(request.accountId, user.id);
    request.context.response.statusCode = 204;
    request.context.response.end();
  }));

  const getGroup = async (request: ScimRequest): Promise<NonNullable<Awaited<ReturnType<typeof storage.scim.getGroup>>>> => {
    const group = await storage.scim.getGroup(request.accountId, request.context.params.id ?? '');
    if (group === null) throw new ScimError(404, 'No such group.', 'noTarget');
    return group;
  };
  const memberIdsOf = (value: unknown): string[] => {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw new ScimError(400, 'members must be a list of { value }.', 'invalidValue');
    return value.map((member: unknown) => {
      const id = (member as { value?: unknown } | null)?.value;
      if (typeof id !== 'string') throw new ScimError(400, 'Each member needs its user id in value.', 'invalidValue');
      return id;
    });
  };
  const groupName = (value: unknown): string => {
    if (typeof value !== 'string' || value.trim() === '' || value.length > 200) throw new ScimError(400, 'displayName must be a non-empty string.', 'invalidValue');
    return value.trim();
  };
  const groupAnswer = async (request: ScimRequest, id: string, status: number): Promise<void> => {
    const group = await storage.scim.getGroup(request.accountId, id);
    if (group === null) throw new ScimError(404, 'No such group.', 'noTarget');
    send(request.context, status, groupJson(group, await memberNames(request.accountId, group.memberIds), request.baseUrl));
  };

  router.add('GET', `${PREFIX}/Groups`, route(async (request) => {
    const filter = parseEqualityFilter(request.context.query.get('filter'), ['displayName']);
    const { startIndex, count } = pageOf(request.context.query);
    const withMembers = !(request.context.query.get('excludedAttributes') ?? '').split(',').includes('members');
    const page = await storage.scim.listGroups(request.accountId, startIndex - 1, count, filter?.value ?? null);
    const resources = await Promise.all(page.items.map(async (group) => groupJson(group, await memberNames(request.accountId, group.memberIds), request.baseUrl, withMembers)));
    send(request.context, 200, listJson(resources, page.total, startIndex));
  }));

  router.add('POST', `${PREFIX}/Groups`, route(async (request) => {
    const body = await readJson(request.context);
    const now = clock.now();
    const id = newId('grp', now);
    const members = memberIdsOf(body.members);
    try {
      await storage.scim.createGroup({ id, accountId: request.accountId, displayName: groupName(body.displayName), externalId: optionalText(body.externalId, 'externalId'), memberIds: members, createdAt: now, updatedAt: now });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ScimError(409, 'A group with this displayName exists.', 'uniqueness');
      throw error;
    }
    await syncUsers(request.connection, request.accountId, members);
    await groupAnswer(request, id, 201);
  }));

  router.add('GET', `${PREFIX}/Groups/:id`, route(async (request) => {
    await groupAnswer(request, (await getGroup(request)).id, 200);
  }));

  router.add('PUT', `${PREFIX}/Groups/:id`, route(async (request) => {
    const group = await getGroup(request);
    const body = await readJson(request.context);
    const members = memberIdsOf(body.members);
    await storage.scim.updateGroup(request.accountId, group.id, { displayName: groupName(body.displayName), externalId: optionalText(body.externalId, 'externalId') }, clock.now());
    await storage.scim.addGroupMembers(request.accountId, group.id, members, true);
    await syncUsers(request.connection, request.accountId, [...group.memberIds, ...members]);
    await groupAnswer(request, group.id, 200);
  }));

  // PATCH as Okta (replace with a value object; remove with `members[value eq "id"]`) and Entra ID (add/remove with a members list) send it.
  router.add('PATCH', `${PREFIX}/Groups/:id`, route(async (request) => {
    const group = await getGroup(request);
    const touched = new Set(group.memberIds);
    for (const operation of patchOperations(await readJson(request.context))) {
      const path = operation.path ?? '';
      const filtered = /^members\[\s*value\s+eq\s+"([^"]+)"\s*\]$/i.exec(path);
      if (filtered !== null) {
        if (operation.op !== 'remove') throw new ScimError(400, 'Only remove takes a filtered members path.', 'invalidSyntax');
        await storage.scim.removeGroupMembers(request.accountId, group.id, [filtered[1] as string]);
        touched.add(filtered[1] as string);
      } else if (path.toLowerCase() === 'members') {
        const ids = memberIdsOf(operation.value);
        for (const id of ids) touched.add(id);
        if (operation.op === 'remove') {
          // Entra sends the members to remove; a remove without a value empties the group (RFC 7644 3.5.2.2).
          await (operation.value === undefined ? storage.scim.addGroupMembers(request.accountId, group.id, [], true) : storage.scim.removeGroupMembers(request.accountId, group.id, ids));
        } else {
          await storage.scim.addGroupMembers(request.accountId, group.id, ids, operation.op === 'replace');
        }
      } else if (path === '' || path.toLowerCase() === 'displayname' || path.toLowerCase() === 'externalid') {
        const values = path === '' ? (operation.value ?? {}) as Record<string, unknown> : { [path]: operation.value };
        for (const [attribute, value] of Object.entries(values)) {
          if (attribute.toLowerCase() === 'displayname') await storage.scim.updateGroup(request.accountId, group.id, { displayName: groupName(value) }, clock.now());
          else if (attribute.toLowerCase() === 'externalid') await storage.scim.updateGroup(request.accountId, group.id, { externalId: optionalText(value, 'externalId') }, clock.now());
          else if (attribute.toLowerCase() === 'members') {
            const ids = memberIdsOf(value);
            for (const id of ids) touched.add(id);
            await storage.scim.addGroupMembers(request.accountId, group.id, ids, operation.op === 'replace');
          }
        }
      } else {
        throw new ScimError(400, `The path ${path} is not supported on groups.`, 'invalidSyntax');
      }
    }
    await syncUsers(request.connection, request.accountId, touched);
    await groupAnswer(request, group.id, 200);
  }));

  router.add('DELETE', `${PREFIX}/Groups/:id`, route(async (request) => {
    const group = await getGroup(request);
    await storage.scim.deleteGroup(request.accountId, group.id);
    await syncUsers(request.connection, request.accountId, group.memberIds);
    request.context.response.statusCode = 204;
    request.context.response.end();
  }));
}
