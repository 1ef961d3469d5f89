import type { KeyVerifier } from '../auth/key-verifier.js';
import type { ProjectJson } from '../contract/projects.js';
import type { Ledger } from '../billing/ledger.js';
import { GatewayError } from '../errors/gateway-error.js';
import { DEFAULT_PROJECT_ID, type Project } from '../domain/project.js';
import type { ApiKey } from '../domain/records.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { Storage } from '../storage/storage.js';
import {
  defaultProjectJson, newProjectRecord, projectPatchFromInput, projectToJson, type CreateProjectInput, type UpdateProjectInput,
} from './project-input.js';

export interface ProjectDependencies {
  storage: Storage;
  clock: Clock;
  ledger: Ledger;
  keys: KeyVerifier;
}

/** Keys read at most for a project list's counts and the default project's spend. */
const MAX_COUNTED_KEYS = 5000;

/** A project of the account, or "not found" (another account's project is never told apart from none). */
export async function requireProject(storage: Storage, accountId: string, id: string): Promise<Project> {
  const project = id === DEFAULT_PROJECT_ID ? null : await storage.projects.getById(id);
  if (project === null || project.accountId !== accountId) throw new GatewayError('not_found', `No project with id '${id}'.`);
  return project;
}

/**
 * The stored project of a key from input: `default` or null is the default project (stored as null); any other id
 * must be a project of the key's account. Undefined: unchanged.
 */
export async function keyProjectFromInput(storage: Storage, accountId: string, input: string | null | undefined): Promise<string | null | undefined> {
  if (input === undefined) return undefined;
  if (input === null || input === DEFAULT_PROJECT_ID) return null;
  const project = await storage.projects.getById(input);
  if (project === null || project.accountId !== accountId) throw new GatewayError('bad_request', `No project with id '${input}' in this account.`, { param: 'project_id' });
  return project.id;
}

/** Every key of the account that a keys page lists (no playground keys). */
export async function accountKeys(storage: Storage, accountId: string): Promise<ApiKey[]> {
  const listed: ApiKey[] = [];
  let after: string | null = null;
  do {
    const page = await storage.keys.listByAccount(accountId, { limit: 200, after }, { playground: false });
    listed.push(...page.data);
    after = page.nextCursor;
  } while (after !== null && listed.length < MAX_COUNTED_KEYS);
  return listed;
}

/** Projects as their views show them: spend and holds after every queued settlement, the keys each holds, its guardrails. */
export async function projectViews(dependencies: ProjectDependencies, accountId: string): Promise<{ json: (project: Project) => ProjectJson; defaultJson: () => ProjectJson }> {
  const holdsOf = await dependencies.ledger.projectHolds(accountId);
  const keys = await accountKeys(dependencies.storage, accountId);
  const guardrailsOf = new Map((await dependencies.storage.guardrails.listBindings()).filter((binding) => binding.scope === 'project').map((binding) => [binding.targetId, binding.names]));
  const now = dependencies.clock.now();
  const counts = new Map<string, number>();
  let defaultSpent = 0n;
  let defaultCount = 0;
  for (const key of keys) {
    const projectId = key.projectId ?? null;
    if (projectId === null) {
      defaultSpent += key.spentNano;
      defaultCount += 1;
    } else {
      counts.set(projectId, (counts.get(projectId) ?? 0) + 1);
    }
  }
  return {
    json: (project) => projectToJson(project, holdsOf(project.id), counts.get(project.id) ?? 0, guardrailsOf.get(project.id) ?? [], now),
    defaultJson: () => defaultProjectJson(accountId, defaultSpent, defaultCount),
  };
}

/** Every instance drops the account's cached keys (they carry their project) and its leases on project pools. */
function projectChanged(dependencies: ProjectDependencies, accountId: string): Promise<void> {
  return dependencies.keys.invalidateAccount(accountId);
}

export async function createProject(dependencies: ProjectDependencies, accountId: string, input: CreateProjectInput): Promise<Project> {
  const now = dependencies.clock.now();
  const project = newProjectRecord(newId('prj', now), accountId, input, now);
  await dependencies.storage.projects.create(project);
  return project;
}

export async function updateProject(dependencies: ProjectDependencies, existing: Project, input: UpdateProjectInput): Promise<Project> {
  // Spend settled before the change counts to the budget's old period, not to the one the change starts.
  if (input.budget !== undefined) await dependencies.ledger.flush();
  const now = dependencies.clock.now();
  const current = (await dependencies.storage.projects.getById(existing.id)) ?? existing;
  const updated = await dependencies.storage.projects.update(existing.id, projectPatchFromInput(input, current, now), now);
  if (updated === null) throw new GatewayError('not_found', `No project with id '${existing.id}'.`);
  await projectChanged(dependencies, existing.accountId);
  return updated;
}

/**
 * Deletes a project without live keys (its revoked keys move to the default project); 409 while it has some. Its
 * guardrail binding goes with it (no key of it is left to apply it to, and the policy becomes deletable).
 */
export async function deleteProject(dependencies: ProjectDependencies, project: Project): Promise<void> {
  if (!(await dependencies.storage.projects.delete(project.id))) {
    throw new GatewayError('conflict', 'The project still has keys that are not revoked: revoke them or move them to another project first.');
  }
  await dependencies.storage.guardrails.setBinding({ scope: 'project', targetId: project.id, names: [] }, dependencies.clock.now());
  await dependencies.storage.guardrails.clearOverridesOf({ scope: 'project', targetId: project.id });
  await projectChanged(dependencies, project.accountId);
}
