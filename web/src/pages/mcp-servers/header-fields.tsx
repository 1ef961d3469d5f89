import { FieldFrame } from '../../ui/field';

/** `Name: value` lines into headers, or what is wrong with the first malformed line. */
export function parseHeaderLines(text: string): Record<string, string> | string {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n').map((row) => row.trim()).filter((row) => row !== '')) {
    const colon = line.indexOf(':');
    if (colon <= 0) return `"${line.split(':')[0] ?? line}" needs a "Name: value" form`;
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The headers a server is called with, as typed: values are write-only (sealed at rest, never shown again). */
export interface HeaderDraft {
  text: string;
  /** On an edit: remove every header the server has. */
  clear: boolean;
}

export const EMPTY_HEADER_DRAFT: HeaderDraft = { text: '', clear: false };

/**
 * What the form sends as `headers`, or what is wrong with the typed lines: on a new server the typed headers (none:
 * `{}`); on an edit the typed headers replace them all, "remove every header" sends `{}`, and nothing typed keeps them
 * (undefined, so the sealed values are not touched).
 */
export function headersBody(draft: HeaderDraft, editing: boolean): { ok: true; headers: Record<string, string> | undefined } | { ok: false; problem: string } {
  const headers = parseHeaderLines(draft.text);
  if (typeof headers === 'string') return { ok: false, problem: headers };
  if (!editing || Object.keys(headers).length > 0) return { ok: true, headers };
  return { ok: true, headers: draft.clear ? {} : undefined };
}

/**
 * The headers part of an MCP server's form: `Name: value` lines (an `Authorization: Bearer …` header, an API key
 * header); on an edit the names kept are listed and the values never are, and every header can be removed.
 */
export function HeaderFields({ draft, onChange, keptNames, error }: { draft: HeaderDraft; onChange: (draft: HeaderDraft) => void; keptNames: string[] | null; error?: string | null }) {
  return (
    <>
      <FieldFrame label={keptNames === null ? 'Headers' : 'New headers'} error={error}
        hint={keptNames === null ? 'One "Name: value" a line, e.g. Authorization: Bearer …; sealed at rest, never shown again.' : `Kept: ${keptNames.length === 0 ? 'none' : keptNames.join(', ')}. Typing headers here replaces them all; values are never shown.`}>
        {({ inputId, describedBy }) => (
          <textarea id={inputId} aria-describedby={describedBy} aria-invalid={error == null ? undefined : true} rows={2} autoComplete="off" spellCheck={false}
            value={draft.text} onChange={(event) => onChange({ ...draft, text: event.target.value })} className="mono" />
        )}
      </FieldFrame>
      {keptNames !== null && keptNames.length > 0 ? (
        <label className="checkbox-row"><input type="checkbox" checked={draft.clear} onChange={(event) => onChange({ ...draft, clear: event.target.checked })} /> Remove every header</label>
      ) : null}
    </>
  );
}
