import type { McpServerOAuthJson } from '../../../../src/contract/index.js';
import { FieldFrame, SelectField, TextField } from '../../ui/field';

/** A server's OAuth client credentials as the admin API shows them: the secret only as set or unset. */
export type McpServerOAuth = McpServerOAuthJson;

/** The OAuth part of the form, as typed. */
export interface OAuthDraft {
  on: boolean;
  tokenUrl: string;
  clientId: string;
  /** Write-only: empty keeps the sealed secret on an edit. */
  clientSecret: string;
  scope: string;
  audience: string;
  authMethod: McpServerOAuth['auth_method'];
}

export function oauthDraftOf(oauth: McpServerOAuth | null | undefined): OAuthDraft {
  return {
    on: oauth != null,
    tokenUrl: oauth?.token_url ?? '',
    clientId: oauth?.client_id ?? '',
    clientSecret: '',
    scope: oauth?.scope ?? '',
    audience: oauth?.audience ?? '',
    authMethod: oauth?.auth_method ?? 'client_secret_basic',
  };
}

/** What the form sends as `oauth`: null removes the credentials; the secret only when typed. */
export function oauthBody(draft: OAuthDraft): Record<string, unknown> | null {
  if (!draft.on) return null;
  return {
    token_url: draft.tokenUrl.trim(),
    client_id: draft.clientId.trim(),
    ...(draft.clientSecret === '' ? {} : { client_secret: draft.clientSecret }),
    scope: draft.scope.trim() === '' ? null : draft.scope.trim(),
    audience: draft.audience.trim() === '' ? null : draft.audience.trim(),
    auth_method: draft.authMethod,
  };
}

/** OAuth 2.1 client credentials of a server that requires them; the secret is write-only. */
export function OAuthFields({ draft, onChange, secretSet }: { draft: OAuthDraft; onChange: (draft: OAuthDraft) => void; secretSet: boolean }) {
  const set = (change: Partial<OAuthDraft>) => onChange({ ...draft, ...change });
  return (
    <fieldset className="stack">
      <legend>OAuth client credentials</legend>
      <label className="checkbox-row"><input type="checkbox" checked={draft.on} onChange={(event) => set({ on: event.target.checked })} /> The server requires OAuth 2.1 tokens (client credentials grant)</label>
      {draft.on ? (
        <>
          <TextField label="Token URL" type="url" value={draft.tokenUrl} onChange={(event) => set({ tokenUrl: event.target.value })} required maxLength={2000} hint="The authorization server's token endpoint; the same address rules as the server's URL." />
          <TextField label="Client ID" value={draft.clientId} onChange={(event) => set({ clientId: event.target.value })} required maxLength={500} autoComplete="off" />
          <TextField label="Client secret" type="password" value={draft.clientSecret} onChange={(event) => set({ clientSecret: event.target.value })} required={!secretSet} maxLength={4000} autoComplete="new-password"
            hint={secretSet ? 'Set (sealed, never shown). Type a new one to replace it.' : 'Sealed at rest, never shown again.'} />
          <TextField label="Scope" value={draft.scope} onChange={(event) => set({ scope: event.target.value })} maxLength={1000} placeholder="none" hint="Space-separated, as the authorization server names them." />
          <TextField label="Audience" value={draft.audience} onChange={(event) => set({ audience: event.target.value })} maxLength={1000} placeholder="none" hint="Only for authorization servers that ask for one (Auth0 and the like)." />
          <SelectField label="Client authentication" value={draft.authMethod} onChange={(event) => set({ authMethod: event.target.value as OAuthDraft['authMethod'] })}
            options={[{ value: 'client_secret_basic', label: 'HTTP Basic (client_secret_basic)' }, { value: 'client_secret_post', label: 'In the form (client_secret_post)' }]} />
        </>
      ) : null}
    </fieldset>
  );
}

/** A stdio server's program as typed: arguments one a line, environment `NAME=value` lines (write-only). */
export interface StdioDraft {
  command: string;
  argsText: string;
  envText: string;
}

export function stdioDraftOf(server: { command: string | null; args: string[] | null } | null): StdioDraft {
  return { command: server?.command ?? '', argsText: (server?.args ?? []).join('\n'), envText: '' };
}

/** The program's fields for the admin API, or what is wrong with the first malformed environment line. */
export function stdioBody(draft: StdioDraft, keepEnv: boolean): Record<string, unknown> | string {
  const env: Record<string, string> = {};
  for (const line of draft.envText.split('\n').map((row) => row.trim()).filter((row) => row !== '')) {
    const equals = line.indexOf('=');
    if (equals <= 0) return `"${line.split('=')[0] ?? line}" needs a "NAME=value" form`;
    env[line.slice(0, equals).trim()] = line.slice(equals + 1);
  }
  const args = draft.argsText.split('\n').filter((row) => row.trim() !== '');
  return { command: draft.command.trim(), args, ...(keepEnv && Object.keys(env).length === 0 ? {} : { env }) };
}

/** The program the gateway starts for a local server (no shell: the command and its arguments as given). */
export function StdioFields({ draft, onChange, envNames }: { draft: StdioDraft; onChange: (draft: StdioDraft) => void; envNames: string[] | null }) {
  const set = (change: Partial<StdioDraft>) => onChange({ ...draft, ...change });
  return (
    <fieldset className="stack">
      <legend>Local process</legend>
      <TextField label="Command" value={draft.command} onChange={(event) => set({ command: event.target.value })} required maxLength={1000} className="mono"
        hint="The program the gateway starts, without a shell (a path, or a name on PATH). Allowed only with MCP_ALLOW_STDIO=true." />
      <FieldFrame label="Arguments" hint="One argument a line, passed as written.">
        {({ inputId, describedBy }) => <textarea id={inputId} aria-describedby={describedBy} rows={2} autoComplete="off" spellCheck={false} value={draft.argsText} onChange={(event) => set({ argsText: event.target.value })} className="mono" />}
      </FieldFrame>
      <FieldFrame label={envNames === null ? 'Environment' : 'New environment'}
        hint={envNames === null ? 'One NAME=value a line; sealed at rest, never shown again.' : `Kept: ${envNames.length === 0 ? 'none' : envNames.join(', ')}. Typing variables here replaces them all; values are never shown.`}>
        {({ inputId, describedBy }) => <textarea id={inputId} aria-describedby={describedBy} rows={2} autoComplete="off" spellCheck={false} value={draft.envText} onChange={(event) => set({ envText: event.target.value })} className="mono" />}
      </FieldFrame>
    </fieldset>
  );
}
