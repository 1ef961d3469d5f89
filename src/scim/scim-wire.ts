import { isoTime } from '../management/time-input.js';
import type { ScimGroup, ScimUser } from '../storage/repositories/scim-repository.js';

/** SCIM 2.0 (RFC 7643, 7644) schema URNs and the shapes of its resources, lists and errors. */
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_CONTENT_TYPE = 'application/scim+json';

/** A SCIM error: its HTTP status and `scimType` (RFC 7644 3.12). */
export class ScimError extends Error {
  override name = 'ScimError';
  constructor(readonly status: number, message: string, readonly scimType?: 'invalidFilter' | 'uniqueness' | 'invalidValue' | 'invalidSyntax' | 'noTarget' | 'mutability') {
    super(message);
  }
}

export function errorJson(error: ScimError): Record<string, unknown> {
  return { schemas: [ERROR_SCHEMA], status: String(error.status), detail: error.message, ...(error.scimType === undefined ? {} : { scimType: error.scimType }) };
}

export function userJson(user: ScimUser, groups: Array<{ id: string; displayName: string }>, baseUrl: string): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(user.externalId === null ? {} : { externalId: user.externalId }),
    userName: user.userName,
    ...(user.displayName === null ? {} : { displayName: user.displayName }),
    active: user.active,
    emails: [{ value: user.userName, type: 'work', primary: true }],
    groups: groups.map((group) => ({ value: group.id, display: group.displayName, $ref: `${baseUrl}/Groups/${group.id}` })),
    meta: { resourceType: 'User', created: isoTime(user.createdAt), lastModified: isoTime(user.updatedAt), location: `${baseUrl}/Users/${user.id}` },
  };
}

export function groupJson(group: ScimGroup, members: Map<string, string>, baseUrl: string, withMembers = true): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
    ...(withMembers ? { members: group.memberIds.map((id) => ({ value: id, display: members.get(id) ?? id, $ref: `${baseUrl}/Users/${id}` })) } : {}),
    meta: { resourceType: 'Group', created: isoTime(group.createdAt), lastModified: isoTime(group.updatedAt), location: `${baseUrl}/Groups/${group.id}` },
  };
}

export function listJson(resources: Array<Record<string, unknown>>, total: number, startIndex: number): Record<string, unknown> {
  return { schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources };
}

/** `attribute eq "value"` for one of `attributes` (the only filter directories send for lookups); null without a filter. */
export function parseEqualityFilter(filter: string | null, attributes: readonly string[]): { attribute: string; value: string } | null {
  if (filter === null || filter.trim() === '') return null;
  const match = /^\s*([A-Za-z.]+)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
  const attribute = attributes.find((known) => known.toLowerCase() === match?.[1]?.toLowerCase());
  if (match === null || attribute === undefined) throw new ScimError(400, `Only the filters ${attributes.map((name) => `${name} eq "…"`).join(' and ')} are supported.`, 'invalidFilter');
  return { attribute, value: (match[2] as string).replace(/\\(.)/g, '$1') };
}

/** startIndex (1-based) and count of a list request, bounded. */
export function pageOf(query: URLSearchParams): { startIndex: number; count: number } {
  const startIndex = Math.max(1, Number.parseInt(query.get('startIndex') ?? '1', 10) || 1);
  const requested = query.get('count');
  const count = requested === null ? 100 : Math.min(200, Math.max(0, Number.parseInt(requested, 10) || 0));
  return { startIndex, count };
}

/** A SCIM boolean as directories send it: `true`, or Entra's `"True"`. */
export function scimBoolean(value: unknown, what: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw new ScimError(400, `${what} must be true or false.`, 'invalidValue');
}

/** One PATCH operation (RFC 7644 3.5.2), its `op` lowercased. */
export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string | null;
  value: unknown;
}

export function patchOperations(body: Record<string, unknown>): PatchOperation[] {
  const operations = body.Operations;
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > 100) throw new ScimError(400, 'Operations must be a list of 1 to 100 operations.', 'invalidSyntax');
  return operations.map((operation: unknown) => {
    const entry = (operation ?? {}) as Record<string, unknown>;
    const op = typeof entry.op === 'string' ? entry.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw new ScimError(400, `Unknown operation ${JSON.stringify(entry.op)}.`, 'invalidSyntax');
    return { op, path: typeof entry.path === 'string' && entry.path !== '' ? entry.path : null, value: entry.value };
  });
}
