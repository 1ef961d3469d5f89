import { useState, type FormEvent } from 'react';
import { ApiError, errorMessage } from '../../api/client';
import { Button } from '../../ui/button';
import { Alert } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';
import { EMPTY_HEADER_DRAFT, HeaderFields, headersBody } from './header-fields';
import { useSaveMcpServer, type AccountMcpServer, type AccountMcpServerInput } from './mcp-server-queries';

const TRANSPORTS: { value: AccountMcpServer['transport']; label: string }[] = [
  { value: 'streamable-http', label: 'Streamable HTTP' },
  { value: 'sse', label: 'HTTP + SSE (older servers)' },
];

/** The fields an API error is shown at (its `param`: `name`, `url`, `headers.<Name>`), with their labels. */
const FIELD_LABELS = { name: 'name', url: 'URL', headers: 'headers' } as const;
type ErrorField = keyof typeof FIELD_LABELS;

/** The form's field an API error names, so it is shown there (null: shown above the form). */
function fieldOf(error: unknown): ErrorField | null {
  if (!(error instanceof ApiError) || error.param === null) return null;
  const field = error.param.split('.')[0];
  return field === 'name' || field === 'url' || field === 'headers' ? field : null;
}

/**
 * Registers an MCP server of the account or changes one: its name, address, transport, headers (write-only: sent when
 * typed, never shown) and whether it is on. A change sends only what changed, so a kept address is not checked
 * again and kept headers stay sealed as they are.
 */
export function McpServerForm({ server, onDone }: { server: AccountMcpServer | null; onDone: (saved: AccountMcpServer | null) => void }) {
  const save = useSaveMcpServer();
  const [name, setName] = useState(server?.name ?? '');
  const [url, setUrl] = useState(server?.url ?? '');
  const [transport, setTransport] = useState<AccountMcpServer['transport']>(server?.transport ?? 'streamable-http');
  const [headers, setHeaders] = useState(EMPTY_HEADER_DRAFT);
  const [enabled, setEnabled] = useState(server?.enabled ?? true);
  const [problem, setProblem] = useState<string | null>(null);
  const field = save.isError ? fieldOf(save.error) : null;
  const fieldError = (which: ErrorField) => (field === which ? errorMessage(save.error) : null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const typed = headersBody(headers, server !== null);
    if (!typed.ok) {
      setProblem(typed.problem);
      return;
    }
    setProblem(null);
    const input: AccountMcpServerInput = {};
    if (server === null || name.trim() !== server.name) input.name = name.trim();
    if (server === null || url.trim() !== server.url) input.url = url.trim();
    if (server === null || transport !== server.transport) input.transport = transport;
    if (server === null || enabled !== server.enabled) input.enabled = enabled;
    if (typed.headers !== undefined) input.headers = typed.headers;
    if (server !== null && Object.keys(input).length === 0) {
      onDone(null);
      return;
    }
    save.mutate({ id: server?.id ?? null, input }, { onSuccess: (saved) => onDone(saved) });
  };

  return (
    <form className="stack" onSubmit={submit} noValidate data-testid="account-mcp-server-form">
      {problem === null ? null : <Alert tone="error">{problem}</Alert>}
      {save.isError ? <Alert tone="error">{field === null ? errorMessage(save.error) : `Not saved: check the ${FIELD_LABELS[field]} below.`}</Alert> : null}
      <TextField label="Name" value={name} onChange={(event) => setName(event.target.value)} required maxLength={64} autoComplete="off" spellCheck={false} error={fieldError('name')}
        hint="Letters and digits joined by single _ or -. Its tools reach your keys as name__tool, and it is served at /mcp/name; the name is unique on the gateway." />
      <TextField label="URL" type="url" value={url} onChange={(event) => setUrl(event.target.value)} required maxLength={2000} autoComplete="off" spellCheck={false} placeholder="https://mcp.example.com/mcp"
        error={fieldError('url')} hint="A public address: private, loopback and link-local addresses are refused, at registration and on every connection." />
      <SelectField label="Transport" value={transport} onChange={(event) => setTransport(event.target.value === 'sse' ? 'sse' : 'streamable-http')} options={TRANSPORTS} />
      <HeaderFields draft={headers} onChange={setHeaders} keptNames={server === null ? null : server.header_names} error={fieldError('headers')} />
      <label className="checkbox-row"><input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} /> Enabled: your keys may use its tools</label>
      <div className="form-actions">
        <Button onClick={() => onDone(null)}>Cancel</Button>
        <Button variant="primary" type="submit" busy={save.isPending}>{server === null ? 'Add server' : 'Save changes'}</Button>
      </div>
    </form>
  );
}
