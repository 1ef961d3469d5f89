import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import { Button } from '../../ui/button';
import { CopyButton } from '../../ui/copy-button';
import { Alert } from '../../ui/feedback';
import type { SsoConnectionJson } from '../../../../src/contract/index.js';
import { FieldFrame, SelectField, TextField } from '../../ui/field';

/** A single sign-on connection as the console API shows it (never its client secret). */
/** A single sign-on connection as the server shows it (never its client secret). */
export type SsoConnectionView = SsoConnectionJson;

const ACCOUNT_ROLES = ['admin', 'developer', 'billing', 'viewer'];
const OPERATOR_ROLES = ['owner', 'admin', 'support', 'viewer'];

/** `value = role` lines ⇄ the role map object. */
function roleMapText(map: Record<string, string>): string {
  return Object.entries(map).map(([value, role]) => `${value} = ${role}`).join('\n');
}

function parseRoleMap(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const line of text.split('\n').map((entry) => entry.trim()).filter(Boolean)) {
    const equals = line.lastIndexOf('=');
    if (equals <= 0) throw new Error(`"${line}" is not "claim value = role".`);
    map[line.slice(0, equals).trim()] = line.slice(equals + 1).trim();
  }
  return map;
}

/** The settings of an OpenID Connect client: the account's (with domains and the SSO requirement) or the operators'. */
export function SsoConnectionForm({ kind, current, redirectUri, onSave, onRemove }: {
  kind: 'account' | 'operator';
  current: SsoConnectionView | null;
  redirectUri: string;
  onSave: (body: Record<string, unknown>) => Promise<void>;
  onRemove?: () => Promise<void>;
}) {
  const roles = kind === 'account' ? ACCOUNT_ROLES : OPERATOR_ROLES;
  const [issuer, setIssuer] = useState(current?.issuer ?? '');
  const [clientId, setClientId] = useState(current?.client_id ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [domains, setDomains] = useState((current?.email_domains ?? []).join(', '));
  const [requireSso, setRequireSso] = useState(current?.require_sso ?? false);
  const [jitRole, setJitRole] = useState(current?.jit_role ?? '');
  const [roleClaim, setRoleClaim] = useState(current?.role_claim ?? '');
  const [roleMap, setRoleMap] = useState(roleMapText(current?.role_map ?? {}));
  const [enabled, setEnabled] = useState(current?.enabled ?? true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await onSave({
        issuer: issuer.trim(),
        client_id: clientId.trim(),
        ...(clientSecret === '' ? {} : { client_secret: clientSecret }),
        email_domains: domains.split(/[\s,]+/).map((domain) => domain.trim()).filter(Boolean),
        ...(kind === 'account' ? { require_sso: requireSso } : {}),
        jit_role: jitRole === '' ? null : jitRole,
        role_claim: roleClaim.trim() === '' ? null : roleClaim.trim(),
        role_map: parseRoleMap(roleMap),
        enabled,
      });
      setClientSecret('');
      setSaved(true);
    } catch (thrown) {
      setError(errorMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="stack" onSubmit={(event) => void submit(event)} noValidate aria-label="Single sign-on settings">
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      {saved ? <Alert tone="success">Saved. The provider answered its discovery document.</Alert> : null}
      <FieldFrame label="Redirect URI" hint="Register exactly this address as the client's redirect (callback) URI at the provider.">
        {({ inputId, describedBy }) => (
          <div className="inline-actions">
            <code id={inputId} aria-describedby={describedBy} data-testid="sso-redirect-uri">{redirectUri}</code>
            <CopyButton text={redirectUri} />
          </div>
        )}
      </FieldFrame>
      <TextField label="Issuer URL" name="issuer" value={issuer} onChange={(event) => setIssuer(event.target.value)} placeholder="https://login.example.com/realms/acme" hint="The provider's issuer, exactly as its /.well-known/openid-configuration names it." required />
      <TextField label="Client ID" name="client_id" value={clientId} onChange={(event) => setClientId(event.target.value)} autoComplete="off" required />
      <TextField label="Client secret" name="client_secret" type="password" value={clientSecret} onChange={(event) => setClientSecret(event.target.value)} autoComplete="new-password"
        hint={current?.client_secret_set === true ? 'Stored encrypted. Leave empty to keep it.' : 'Stored encrypted; never shown again.'} />
      <TextField label="Email domains" name="email_domains" value={domains} onChange={(event) => setDomains(event.target.value)} placeholder="example.com, example.org"
        hint={kind === 'account' ? 'Your organisation\'s domains: people sign in with an address in them, and only verified addresses count.' : 'Optional: only verified addresses in these domains may sign in as operators.'} />
      {kind === 'account' ? (
        <label className="checkbox-row"><input type="checkbox" checked={requireSso} onChange={(event) => setRequireSso(event.target.checked)} /> Require single sign-on for members with these domains (owners keep their password)</label>
      ) : null}
      <SelectField label={kind === 'account' ? 'Role on first sign-in' : 'Operator role when no claim maps'} name="jit_role" value={jitRole} onChange={(event) => setJitRole(event.target.value)}
        options={[{ value: '', label: kind === 'account' ? 'Nobody joins on first sign-in' : 'Refuse the sign-in' }, ...roles.map((role) => ({ value: role, label: role }))]} />
      <TextField label="Role claim" name="role_claim" value={roleClaim} onChange={(event) => setRoleClaim(event.target.value)} placeholder="groups" hint="The ID token claim that lists the person's groups or roles (groups, roles, …)." />
      <FieldFrame label="Role map" hint={`One "claim value = role" a line; roles: ${roles.join(', ')}. The highest role any value maps wins, at every sign-in.${kind === 'account' ? ' A value may grant a project instead: "search-team = project:Search:developer" (developer or viewer; viewer when left out).' : ''}`}>
        {({ inputId, describedBy }) => <textarea id={inputId} aria-describedby={describedBy} name="role_map" rows={3} value={roleMap} onChange={(event) => setRoleMap(event.target.value)} placeholder={kind === 'account' ? 'engineering = developer' : 'gateway-admins = admin'} />}
      </FieldFrame>
      <label className="checkbox-row"><input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} /> Enabled</label>
      <div className="inline-actions">
        <Button type="submit" variant="primary" busy={busy}>Save single sign-on</Button>
        {current !== null && onRemove !== undefined ? <Button variant="danger" onClick={() => void onRemove()}>Remove</Button> : null}
      </div>
    </form>
  );
}
