import type { ProjectFunds } from '../billing/money-pools.js';
import type { Project } from '../domain/project.js';
import type { ApiKey } from '../domain/records.js';
import type { Model } from '../domain/model-records.js';
import type { LimitRule } from '../limits/rate-limiter.js';
import { minuteRule } from '../limits/minute-rules.js';

/**
 * What admission asks of a key's project: its model allowlist, the money pools it adds to the reservation (its quota
 * cap and period budget, held exactly like the key's own), and its RPM/TPM windows. The project comes with the key
 * from the key verifier's cache (`ApiKey.project`); a key of the default project has none of these limits.
 */

/** The key's project as loaded with it (null: the default project, or a project deleted since). */
export function projectOfKey(key: ApiKey): Project | null {
  return key.project ?? null;
}

/** The project's model allowlist, which (like a key's) may name the model by its id or by the name the request used. */
export function projectMayUse(key: ApiKey, model: Model, name: string | null): boolean {
  const project = projectOfKey(key);
  if (project === null || project.allowedModels === null) return true;
  return project.allowedModels.includes(model.id) || (name !== null && project.allowedModels.includes(name));
}

/**
 * The project part of a money reservation: every key of a project names it, so each charge adds to the project's
 * spend; its cap and budget pools take part only when set.
 */
export function projectFundsOf(key: ApiKey): ProjectFunds | null {
  const project = projectOfKey(key);
  return project === null ? null : { id: project.id, capped: project.quotaNano !== null, budgeted: project.budget !== null };
}

/** The project's one-minute request window (null: none). */
export function projectRpmRule(key: ApiKey): LimitRule | null {
  const project = projectOfKey(key);
  return project === null || project.rpm === null ? null : minuteRule(project, 'project', 'rpm', 'project-rpm', project.rpm);
}

/** The project's one-minute token window (null: none). */
export function projectTpmRule(key: ApiKey): LimitRule | null {
  const project = projectOfKey(key);
  return project === null || project.tpm === null ? null : minuteRule(project, 'project', 'tpm', 'project-tpm', project.tpm);
}
