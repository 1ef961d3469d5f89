/**
 * An audit entry's before and after as a person reads them: the fields of the answer that changed, each old → new; a
 * created resource lists what it was made with, a deleted one what it had. Nested objects are walked with dotted
 * names.
 */
type Flat = Map<string, unknown>;

/** Some records are logged as stored (`disabledAt`), their answers as JSON (`disabled_at`): one spelling for both. */
const snake = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

function flatten(value: unknown, prefix = '', into: Flat = new Map()): Flat {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && prefix !== '') into.set(prefix, {});
    for (const [name, inner] of entries) flatten(inner, prefix === '' ? snake(name) : `${prefix}.${snake(name)}`, into);
  } else if (prefix !== '') {
    // A time logged as epoch milliseconds reads as the ISO string the JSON answers carry.
    const time = prefix.endsWith('_at') && typeof value === 'number' && value > 1e11 ? new Date(value).toISOString() : value;
    into.set(prefix, time);
  }
  return into;
}

function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  if (value === null) return 'null';
  if (typeof value === 'string') return value === '' ? '""' : value;
  return JSON.stringify(value);
}

/** Fields that say nothing about the change itself. */
const NOISE = new Set(['updated_at', 'object']);

export interface FieldChange { field: string; before: unknown; after: unknown }

export function auditChanges(before: unknown, after: unknown): FieldChange[] {
  const old = flatten(before);
  const now = flatten(after);
  // An answer that holds only part of the resource (a credit answers the balance alone) says nothing of the rest.
  const partial = before != null && after != null;
  const fields = [...new Set([...(partial ? [] : old.keys()), ...now.keys()])].filter((field) => !NOISE.has(field.split('.').pop() ?? field));
  return fields
    .filter((field) => JSON.stringify(old.get(field)) !== JSON.stringify(now.get(field)))
    .map((field) => ({ field, before: old.get(field), after: now.get(field) }));
}

export function AuditChanges({ before, after }: { before: unknown; after: unknown }) {
  if (before == null && after == null) return <span className="field-hint">—</span>;
  const changes = auditChanges(before, after);
  const created = before == null;
  const deleted = after == null;
  if (changes.length === 0) return <span className="field-hint">No field changed</span>;
  return (
    <dl className="audit-changes" data-testid="audit-changes">
      {changes.slice(0, 40).map((change) => (
        <div key={change.field} className="audit-change">
          <dt className="mono">{change.field}</dt>
          <dd>
            {created ? <ins>{shown(change.after)}</ins> : deleted ? <del>{shown(change.before)}</del> : (
              <><del>{shown(change.before)}</del> <span aria-hidden="true">→</span><span className="visually-hidden"> becomes </span> <ins>{shown(change.after)}</ins></>
            )}
          </dd>
        </div>
      ))}
      {changes.length > 40 ? <p className="field-hint">and {changes.length - 40} more fields (see the CSV export)</p> : null}
    </dl>
  );
}
