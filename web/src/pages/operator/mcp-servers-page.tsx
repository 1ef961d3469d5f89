import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatDateTime, formatMilliseconds } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { SelectField, TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { EMPTY_HEADER_DRAFT, HeaderFields, headersBody } from '../mcp-servers/header-fields';
import { OAuthFields, oauthBody, oauthDraftOf, StdioFields, stdioBody, stdioDraftOf } from './mcp-server-connection-fields';
import type { AdminMcpServerJson, AdminMcpServerListJson, McpToolListJson } from '../../../../src/contract/index.js';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';

type ToolRule = 'allowed' | 'read_only' | 'refused';

type McpServer = AdminMcpServerJson;

const RULES: { value: ToolRule; label: string }[] = [
  { value: 'allowed', label: 'Allowed' },
  { value: 'read_only', label: 'Only if read-only' },
  { value: 'refused', label: 'Refused (hidden)' },
];
const RULE_LABEL: Record<ToolRule, string> = { allowed: 'allowed', read_only: 'only if read-only', refused: 'refused' };

/** A limit as typed: empty clears it; anything not a whole number is sent as typed, for the server to refuse by name. */
const limitOf = (text: string): number | string | null => (text.trim() === '' ? null : /^\d+$/.test(text.trim()) ? Number(text.trim()) : text);

/** Create or edit a server: header values are write-only (sent when typed, never shown). */
function McpServerForm({ server, onDone }: { server: McpServer | null; onDone: () => void }) {
  const action = useOperatorAction<McpServer>();
  const [name, setName] = useState(server?.name ?? '');
  const [url, setUrl] = useState(server?.url ?? '');
  const [transport, setTransport] = useState(server?.transport ?? 'streamable-http');
  const [headerDraft, setHeaderDraft] = useState(EMPTY_HEADER_DRAFT);
  const [oauth, setOAuth] = useState(oauthDraftOf(server?.oauth));
  const [stdio, setStdio] = useState(stdioDraftOf(server));
  const local = transport === 'stdio';
  const [isPublic, setPublic] = useState(server?.public ?? false);
  const [enabled, setEnabled] = useState(server?.enabled ?? true);
  const [price, setPrice] = useState(server?.price_per_call ?? '');
  const [perMinute, setPerMinute] = useState(server?.calls_per_minute?.toString() ?? '');
  const [concurrency, setConcurrency] = useState(server?.concurrency?.toString() ?? '');
  const [defaultRule, setDefaultRule] = useState<ToolRule>(server?.tool_rules.default ?? 'allowed');
  const [toolRules, setToolRules] = useState<Record<string, ToolRule>>(server?.tool_rules.tools ?? {});
  const [newTool, setNewTool] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const known = [...new Set([...(server?.health?.tools.map((tool) => tool.name) ?? []), ...Object.keys(toolRules)])].sort();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const headers = headersBody(headerDraft, server !== null);
    if (!headers.ok) {
      setProblem(headers.problem);
      return;
    }
    const program = local ? stdioBody(stdio, server?.transport === 'stdio') : null;
    if (typeof program === 'string') {
      setProblem(program);
      return;
    }
    setProblem(null);
    const body: Record<string, unknown> = {
      name: name.trim(), transport, public: isPublic, enabled,
      ...(local ? program : { url: url.trim(), oauth: oauthBody(oauth) }),
      price_per_call: price.trim() === '' ? null : price.trim(),
      calls_per_minute: limitOf(perMinute), concurrency: limitOf(concurrency),
      tool_rules: { default: defaultRule, tools: toolRules },
    };
    // Connection settings left as they were are not sent: changing them restarts the process or renews the token.
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (server !== null && !local && same(body.oauth, oauthBody(oauthDraftOf(server.oauth)))) delete body.oauth;
    if (server !== null && local && server.transport === 'stdio' && body.env === undefined && same([body.command, body.args], [server.command, server.args])) {
      delete body.command;
      delete body.args;
    }
    // A stdio server has no headers.
    if (!local && headers.headers !== undefined) body.headers = headers.headers;
    action.mutate(server === null
      ? { method: 'POST', path: 'admin/mcp-servers', body }
      : { method: 'PATCH', path: `admin/mcp-servers/${encodeURIComponent(server.id)}`, body }, { onSuccess: onDone });
  };

  return (
    <form className="stack" onSubmit={submit} data-testid="mcp-server-form">
      <TextField label="Name" value={name} onChange={(event) => setName(event.target.value)} required maxLength={64} hint="Its tools are offered as name__tool, and it is served at /mcp/name." />
      <SelectField label="Transport" value={transport} onChange={(event) => setTransport(event.target.value as McpServer['transport'])}
        options={[{ value: 'streamable-http', label: 'Streamable HTTP' }, { value: 'sse', label: 'HTTP + SSE (older)' }, { value: 'stdio', label: 'Local process (stdio)' }]} />
      {local ? <StdioFields draft={stdio} onChange={setStdio} envNames={server?.transport === 'stdio' ? server.env_names ?? [] : null} /> : (
      <>
      <TextField label="URL" type="url" value={url} onChange={(event) => setUrl(event.target.value)} required maxLength={2000} />
      <HeaderFields draft={headerDraft} onChange={setHeaderDraft} keptNames={server === null ? null : server.header_names} />
      <OAuthFields draft={oauth} onChange={setOAuth} secretSet={server?.oauth?.client_secret === 'set'} />
      </>
      )}
      <label className="checkbox-row"><input type="checkbox" checked={isPublic} onChange={(event) => setPublic(event.target.checked)} /> Public: every account may use it (otherwise only accounts whose policy names it)</label>
      <label className="checkbox-row"><input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} /> Enabled</label>
      <TextField label="Price per call (USD)" inputMode="decimal" value={price} onChange={(event) => setPrice(event.target.value)} placeholder="free" hint="Charged to the account for each call; empty is free." />
      <TextField label="Calls per minute, per key" inputMode="numeric" value={perMinute} onChange={(event) => setPerMinute(event.target.value)} placeholder="no limit" />
      <TextField label="Calls at once, per key" inputMode="numeric" value={concurrency} onChange={(event) => setConcurrency(event.target.value)} placeholder="no limit" />
      <SelectField label="Rule for every tool" value={defaultRule} onChange={(event) => setDefaultRule(event.target.value as ToolRule)} options={RULES} />
      <fieldset className="stack">
        <legend>Rules for named tools</legend>
        {known.length === 0 ? <p className="key-meta">No tools listed yet: add a tool by name, or wait for the health check to list them.</p> : null}
        {known.map((tool) => (
          <SelectField key={tool} label={tool} value={toolRules[tool] ?? ''}
            onChange={(event) => setToolRules((rules) => {
              const next = { ...rules };
              if (event.target.value === '') delete next[tool];
              else next[tool] = event.target.value as ToolRule;
              return next;
            })}
            options={[{ value: '', label: 'As every tool' }, ...RULES]} />
        ))}
        <div className="form-actions">
          <TextField label="Another tool" value={newTool} onChange={(event) => setNewTool(event.target.value)} maxLength={128} />
          <Button onClick={() => { const tool = newTool.trim(); if (tool !== '') { setToolRules((rules) => ({ ...rules, [tool]: rules[tool] ?? 'refused' })); setNewTool(''); } }}>Add rule</Button>
        </div>
      </fieldset>
      {problem === null ? null : <Alert tone="error">{problem}</Alert>}
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions"><Button onClick={onDone}>Cancel</Button><Button variant="primary" type="submit" busy={action.isPending}>{server === null ? 'Add server' : 'Save'}</Button></div>
    </form>
  );
}

function limitsText(server: McpServer): string {
  const parts = [
    server.calls_per_minute === null ? null : `${server.calls_per_minute}/min`,
    server.concurrency === null ? null : `${server.concurrency} at once`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

function rulesText(server: McpServer): string {
  const named = Object.entries(server.tool_rules.tools).map(([tool, rule]) => `${tool}: ${RULE_LABEL[rule]}`);
  return [`every tool ${RULE_LABEL[server.tool_rules.default]}`, ...named].join(' · ');
}

/** The registered upstream MCP servers with their health and tools, and create/edit/delete for those who may write. */
export function OperatorMcpServersPage() {
  useDocumentTitle('MCP servers');
  const api = useApi();
  const queryClient = useQueryClient();
  const me = useOperatorMe();
  const writable = canWrite(me.data);
  const servers = useOperatorGet<AdminMcpServerListJson>('admin/mcp-servers', undefined, { refreshMs: 15_000 });
  const removal = useOperatorAction();
  const [editing, setEditing] = useState<McpServer | 'new' | null>(null);
  const [deleting, setDeleting] = useState<McpServer | null>(null);
  const [listing, setListing] = useState<Record<string, string>>({});

  // A live listing is a health check run now: its result lands on the server's row.
  const listTools = (server: McpServer) => {
    setListing((all) => ({ ...all, [server.id]: 'Listing…' }));
    api.get<McpToolListJson>(`/api/operator/admin/mcp-servers/${encodeURIComponent(server.id)}/tools`).then(
      (answer) => setListing((all) => ({ ...all, [server.id]: `${answer.data.length} tools listed now` })),
      (error: unknown) => setListing((all) => ({ ...all, [server.id]: errorMessage(error) })),
    ).finally(() => void queryClient.invalidateQueries({ queryKey: ['operator'] }));
  };

  return (
    <div className="page stack">
      <PageHeader title="MCP servers" description="Upstream MCP servers behind /mcp: their health, tools, price, limits and tool rules. Each enabled server is checked in the background."
        actions={writable ? <Button variant="primary" onClick={() => setEditing('new')}>Add MCP server</Button> : undefined} />
      <Card>
        {servers.isPending ? <Loading /> : null}
        {servers.isError ? <Alert tone="error">{errorMessage(servers.error)}</Alert> : null}
        {servers.data?.data.length === 0 ? <p className="empty">No MCP servers yet.</p> : null}
        {servers.data === undefined || servers.data.data.length === 0 ? null : (
          <div className="table-scroll">
            <table className="table table-cards" data-testid="mcp-servers-table">
              <caption className="visually-hidden">MCP servers</caption>
              <thead><tr><th scope="col">Server</th><th scope="col">Health</th><th scope="col">Tools</th><th scope="col">Price and limits</th><th scope="col">Tool rules</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {servers.data.data.map((server) => {
                  const health = server.health;
                  return (
                    <tr key={server.id} data-mcp-server-id={server.id}>
                      <th scope="row">
                        <span className="key-name">{server.name}</span>
                        <span className="key-meta mono wrap-anywhere">{server.url ?? [server.command ?? '', ...(server.args ?? [])].join(' ')}</span>
                        <span className="key-meta">{server.transport}{server.public ? ' · public' : ' · by policy'}{server.enabled ? '' : ' · disabled'}{server.header_names.length === 0 ? '' : ` · headers ${server.header_names.join(', ')}`}{server.oauth === null ? '' : ` · OAuth ${server.oauth.client_id} (secret ${server.oauth.client_secret})`}{server.env_names === null || server.env_names.length === 0 ? '' : ` · env ${server.env_names.join(', ')}`}</span>
                      </th>
                      <td data-label="Health" aria-live="polite">
                        <Badge tone={!server.enabled ? 'neutral' : health === null ? 'neutral' : health.status === 'healthy' ? 'success' : 'danger'}>
                          {!server.enabled ? 'disabled' : health === null ? 'not checked yet' : health.status === 'healthy' ? 'up' : 'down'}
                        </Badge>
                        {health === null ? null : (
                          <span className="key-meta" data-testid="mcp-health-detail">
                            {health.status === 'healthy' ? `${formatMilliseconds(health.latency_ms)} · ` : ''}checked {formatDateTime(health.checked_at)}{health.error === null ? '' : ` · ${health.error}`}
                          </span>
                        )}
                      </td>
                      <td data-label="Tools">
                        {health === null || health.tools.length === 0 ? <span className="key-meta">none listed</span> : (
                          <span className="mono wrap-anywhere">{health.tools.map((tool) => (tool.read_only ? `${tool.name} (read-only)` : tool.name)).join(', ')}</span>
                        )}
                        <Button variant="ghost" onClick={() => listTools(server)} aria-label={`List tools of ${server.name} now`}>List now</Button>
                        {listing[server.id] === undefined ? null : <span className="key-meta">{listing[server.id]}</span>}
                      </td>
                      <td data-label="Price and limits">
                        <span>{server.price_per_call === null ? 'free' : `$${server.price_per_call} a call`}</span>
                        <span className="key-meta">limits: {limitsText(server)}</span>
                      </td>
                      <td data-label="Tool rules" className="wrap-anywhere">{rulesText(server)}</td>
                      <td className="cell-actions">
                        {writable ? (
                          <>
                            <Button variant="ghost" onClick={() => setEditing(server)} aria-label={`Edit ${server.name}`}>Edit</Button>
                            <Button variant="ghost" onClick={() => { removal.reset(); setDeleting(server); }} aria-label={`Delete ${server.name}`}>Delete</Button>
                          </>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Dialog open={editing !== null} title={editing === 'new' ? 'Add an MCP server' : 'Edit MCP server'} onClose={() => setEditing(null)}>
        {editing === null ? null : <McpServerForm server={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      </Dialog>
      <Dialog open={deleting !== null} title="Delete MCP server" onClose={() => setDeleting(null)}>
        {deleting === null ? null : (
          <div className="stack">
            <p>Delete <strong>{deleting.name}</strong>? Its tools disappear from /mcp and from models' tool lists at once; usage already logged keeps its name.</p>
            {removal.isError ? <Alert tone="error">{errorMessage(removal.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={() => setDeleting(null)}>Cancel</Button>
              <Button variant="danger" busy={removal.isPending} onClick={() => removal.mutate({ method: 'DELETE', path: `admin/mcp-servers/${encodeURIComponent(deleting.id)}` }, { onSuccess: () => setDeleting(null) })}>Delete {deleting.name}</Button>
            </div>
          </div>
        )}
      </Dialog>
    </div>
  );
}
