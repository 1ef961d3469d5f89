import { newId } from '../../shared/ids.js';
import type { ConsoleDeps } from '../console-deps.js';
import { redactSecrets } from './audit-redaction.js';

export interface AuditRecord {
  operatorId: string;
  operatorEmail: string;
  action: string;
  target: string;
  status: number;
  /** JSON text already redacted, or a value to redact here. */
  before: string | unknown;
  after: string | unknown;
  ip: string;
}

function asRedactedText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  return JSON.stringify(redactSecrets(value));
}

/** Appends one entry to the operators' audit log. */
export async function recordAudit(deps: ConsoleDeps, record: AuditRecord): Promise<void> {
  const now = deps.services.clock.now();
  await deps.services.storage.operators.appendAudit({
    id: newId('aud', now), at: now, operatorId: record.operatorId, operatorEmail: record.operatorEmail, action: record.action,
    target: record.target, status: record.status, before: asRedactedText(record.before), after: asRedactedText(record.after), ip: record.ip,
  });
}
