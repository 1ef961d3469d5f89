import type { AuditEntryJson } from '../../contract/operator.js';
import { isoTime } from '../../management/time-input.js';
import { csvLine } from '../../shared/csv.js';
import type { AuditEntry } from '../../storage/repositories/operator-repository.js';

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function auditJson(entry: AuditEntry): AuditEntryJson {
  return {
    id: entry.id,
    at: isoTime(entry.at),
    operator: { id: entry.operatorId, email: entry.operatorEmail },
    action: entry.action,
    target: entry.target,
    status: entry.status,
    before: parsed(entry.before),
    after: parsed(entry.after),
    ip: entry.ip,
  };
}

export const AUDIT_CSV_HEADER = 'id,at,operator_id,operator_email,action,target,status,ip,before,after\r\n';

export function auditCsvLine(entry: AuditEntry): string {
  return csvLine([entry.id, isoTime(entry.at) ?? '', entry.operatorId, entry.operatorEmail, entry.action, entry.target, entry.status, entry.ip, entry.before ?? '', entry.after ?? '']);
}
