import { useState } from 'react';
import { useConsoleConfig, useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatCost, formatDateTime, formatMilliseconds } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { McpServerForm } from './mcp-server-form';
import { useCheckMcpServer, useDeleteMcpServer, useOwnMcpServers, type AccountMcpServer } from './mcp-server-queries';

/** Roles that manage the account's own MCP servers (the console API's `mcp:manage`); the API refuses the others. */
export function canManageMcpServers(role: string | null | undefined): boolean {
  return role === 'owner' || role === 'admin';
}

/** The last background check's verdict; a server the gateway does not serve (disabled, or the switch off) is not checked. */
function HealthCell({ server, served }: { server: AccountMcpServer; served: boolean }) {
  const health = server.health;
  const tone = !served || !server.enabled || health === null ? 'neutral' : health.status === 'healthy' ? 'success' : 'danger';
  const label = !served ? 'not served' : !server.enabled ? 'disabled' : health === null ? 'not checked yet' : health.status === 'healthy' ? 'up' : 'down';
  return (
    <>
      <Badge tone={tone}>{label}</Badge>
      {health === null || !served ? null : (
        <span className="key-meta" data-testid="mcp-health-detail">
          {health.status === 'healthy' ? `${formatMilliseconds(health.latency_ms)} · ` : ''}checked {formatDateTime(health.checked_at)}{health.error === null ? '' : ` · ${health.error}`}
        </span>
      )}
    </>
  );
}

function ToolsCell({ server }: { server: AccountMcpServer }) {
  const tools = server.health?.tools ?? [];
  if (tools.length === 0) return <span className="key-meta">none listed</span>;
  return <span className="mono wrap-anywhere">{tools.map((tool) => (tool.read_only ? `${server.name}__${tool.name} (read-only)` : `${server.name}__${tool.name}`)).join(', ')}</span>;
}

/**
 * The account's own MCP servers (when the operator allows them): each with its address, transport, header names,
 * health and tools, and the price the operator set; owners and admins register, change and delete them. With the
 * operator's switch off the page says so and only removing a kept server is offered.
 */
export function McpServersPage() {
  useDocumentTitle('MCP servers');
  const session = useSession();
  const config = useConsoleConfig();
  const manages = canManageMcpServers(session.data?.role);
  const servers = useOwnMcpServers(manages);
  const remove = useDeleteMcpServer();
  const check = useCheckMcpServer();
  const [checked, setChecked] = useState<{ tone: 'success' | 'warning' | 'error'; text: string } | null>(null);
  const [editing, setEditing] = useState<AccountMcpServer | 'new' | null>(null);
  const [deleting, setDeleting] = useState<AccountMcpServer | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const allowed = servers.data?.account_servers_allowed === true;
  const endpoint = `${config.data?.api_base_url ?? ''}/mcp`;

  const open = (next: AccountMcpServer | 'new') => {
    setNotice(null);
    setChecked(null);
    setEditing(next);
  };

  // A check run now: its verdict lands on the row (as the background check's would) and is said in the notice.
  const checkNow = (server: AccountMcpServer) => {
    setNotice(null);
    setChecked(null);
    check.mutate(server.id, {
      onSuccess: ({ name, health }) => setChecked(health?.status === 'healthy'
        ? { tone: 'success', text: `MCP server ${name} is up: ${health.tool_count} ${health.tool_count === 1 ? 'tool' : 'tools'} listed.` }
        : { tone: 'warning', text: `MCP server ${name} is down: ${health?.error ?? 'check failed'}` }),
      onError: (error) => setChecked({ tone: 'error', text: `${server.name} was not checked: ${errorMessage(error)}` }),
    });
  };

  return (
    <div className="page stack">
      <PageHeader title="MCP servers"
        description={<>The account's own MCP servers, for its keys only: their tools reach the keys through <code>{endpoint}</code> as <code>name__tool</code>, next to the servers the operator offers, at the price the operator sets. Headers are sealed and never shown again.</>}
        actions={manages && allowed ? <Button variant="primary" onClick={() => open('new')}>Add MCP server</Button> : undefined} />
      {!manages ? <Alert tone="info">Only owners and admins of the account manage its MCP servers. The API keys page shows which servers your keys may use.</Alert> : null}
      {manages && servers.data !== undefined && !allowed ? (
        <Alert tone="warning">
          The operator of this gateway has not enabled MCP servers of accounts (<code>MCP_ALLOW_ACCOUNT_SERVERS</code>), so none can be added or changed, and
          {servers.data.data.length === 0 ? ' your keys use the servers the operator offers.' : ' the ones below are not served to your keys. You may still delete them.'}
        </Alert>
      ) : null}
      {notice === null ? null : <Alert tone="success">{notice}</Alert>}
      {checked === null ? null : <Alert tone={checked.tone}>{checked.text}</Alert>}
      {!manages ? null : servers.isPending ? <Loading /> : servers.isError ? <Alert tone="error">{errorMessage(servers.error)}</Alert> : servers.data.data.length === 0 && !allowed ? null : (
        <Card>
          {servers.data.data.length === 0 ? <p className="empty">No MCP server yet. Add one to give this account's keys its tools; the gateway checks it in the background and lists its tools here.</p> : (
            <div className="table-scroll">
              <table className="table table-cards" data-testid="account-mcp-servers-table">
                <caption className="visually-hidden">The account's MCP servers</caption>
                <thead><tr><th scope="col">Server</th><th scope="col">Health</th><th scope="col">Tools</th><th scope="col">Price a call</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
                <tbody>
                  {servers.data.data.map((server) => (
                    <tr key={server.id} data-mcp-server-id={server.id}>
                      <th scope="row" className="column-wide">
                        <span className="key-name">{server.name}</span>
                        <span className="key-meta mono wrap-anywhere">{server.url}</span>
                        <span className="key-meta">{server.transport === 'sse' ? 'HTTP + SSE' : 'Streamable HTTP'}{server.header_names.length === 0 ? ' · no headers' : ` · headers ${server.header_names.join(', ')}`}</span>
                      </th>
                      <td data-label="Health" aria-live="polite"><HealthCell server={server} served={allowed} /></td>
                      <td data-label="Tools"><ToolsCell server={server} /></td>
                      <td data-label="Price a call">{server.price_per_call === null ? 'free' : formatCost(Number(server.price_per_call))}</td>
                      <td className="cell-actions">
                        <div className="row-actions">
                          {allowed && server.enabled ? <Button busy={check.isPending && check.variables === server.id} disabled={check.isPending} onClick={() => checkNow(server)} aria-label={`Check ${server.name} now`}>Check now</Button> : null}
                          {allowed ? <Button onClick={() => open(server)} aria-label={`Edit ${server.name}`}>Edit</Button> : null}
                          <Button variant="danger" onClick={() => { remove.reset(); setDeleting(server); }} aria-label={`Delete ${server.name}`}>Delete</Button>
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
      )}
      <Dialog open={editing !== null} title={editing === 'new' ? 'Add an MCP server' : 'Edit MCP server'} onClose={() => setEditing(null)}>
        {editing === null ? null : (
          <McpServerForm server={editing === 'new' ? null : editing} onDone={(saved) => {
            if (saved !== null) setNotice(editing === 'new' ? `MCP server ${saved.name} added: its health and tools show here after its first check.` : `MCP server ${saved.name} saved.`);
            setEditing(null);
          }} />
        )}
      </Dialog>
      <Dialog open={deleting !== null} title="Delete MCP server" onClose={() => setDeleting(null)}>
        {deleting === null ? null : (
          <div className="stack">
            <p>Delete <strong>{deleting.name}</strong>? Its tools disappear from <code>/mcp</code> for every key of the account at once, and its sealed headers are gone; usage already logged keeps its name.</p>
            {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={() => setDeleting(null)}>Cancel</Button>
              <Button variant="danger" busy={remove.isPending} onClick={() => remove.mutate(deleting.id, { onSuccess: () => { setNotice(`MCP server ${deleting.name} deleted.`); setDeleting(null); } })}>Delete {deleting.name}</Button>
            </div>
          </div>
        )}
      </Dialog>
    </div>
  );
}
