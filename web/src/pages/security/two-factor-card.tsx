import { useState, type FormEvent } from 'react';
import { useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { Button } from '../../ui/button';
import { CopyButton } from '../../ui/copy-button';
import { Alert, Badge, Card } from '../../ui/feedback';
import { TextField } from '../../ui/field';
import { BackupCodes } from './backup-codes';
import { useTwoFactorChange, useTwoFactorSetup, type TwoFactorSetup } from './security-queries';

/** The QR code arrives as SVG text; as an <img> data URL it is a picture only (no script can run in it). */
function svgDataUrl(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

function CodeForm({ label, submitLabel, variant, onSubmit, busy, error }: {
  label: string; submitLabel: string; variant: 'primary' | 'danger' | 'secondary';
  onSubmit: (code: string) => void; busy: boolean; error: unknown;
}) {
  const [code, setCode] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit(code.replace(/\s+/g, ''));
  };
  return (
    <form className="inline-form" onSubmit={submit} noValidate>
      <TextField label={label} value={code} onChange={(event) => setCode(event.target.value)} inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]*" maxLength={6} required spellCheck={false} error={error == null ? null : errorMessage(error)} />
      <Button type="submit" variant={variant} busy={busy}>{submitLabel}</Button>
    </form>
  );
}

function Enrolment({ setup, onEnabled }: { setup: TwoFactorSetup; onEnabled: (codes: string[]) => void }) {
  const enable = useTwoFactorChange('enable');
  return (
    <div className="stack">
      <ol className="steps">
        <li>Scan this QR code with an authenticator app (1Password, Google Authenticator, Aegis, …).</li>
        <li>Or type the secret in by hand.</li>
        <li>Enter the 6-digit code the app shows.</li>
      </ol>
      <div className="enrolment">
        <img className="qr-code" src={svgDataUrl(setup.qr_svg)} alt="QR code of the two-factor secret" width={184} height={184} />
        <div className="stack">
          <p className="field-hint">Secret (base32)</p>
          <p><code className="secret" data-testid="totp-secret">{setup.secret}</code></p>
          <div><CopyButton text={setup.secret} label="Copy the secret" /></div>
        </div>
      </div>
      <CodeForm label="Code from the app" submitLabel="Turn on two-factor" variant="primary" busy={enable.isPending} error={enable.error}
        onSubmit={(code) => enable.mutate(code, { onSuccess: (result) => onEnabled(result?.backup_codes ?? []) })} />
    </div>
  );
}

export function TwoFactorCard() {
  const session = useSession();
  const setup = useTwoFactorSetup();
  const disable = useTwoFactorChange('disable');
  const regenerate = useTwoFactorChange('backup-codes');
  const [backupCodes, setBackupCodes] = useState<string[] | null>(null);
  const enabled = session.data?.user?.two_factor_enabled === true;

  return (
    <Card title={<>Two-factor authentication {enabled ? <Badge tone="success">On</Badge> : <Badge tone="neutral">Off</Badge>}</>}>
      {backupCodes === null ? null : (
        <>
          <BackupCodes codes={backupCodes} />
          <div><Button variant="secondary" onClick={() => setBackupCodes(null)}>I have saved the codes</Button></div>
        </>
      )}
      {backupCodes === null && enabled ? (
        <div className="stack">
          <p>Signing in asks for a code from your authenticator app or a backup code.</p>
          <CodeForm label="Current code, to turn two-factor off" submitLabel="Turn off" variant="danger" busy={disable.isPending} error={disable.error}
            onSubmit={(code) => disable.mutate(code, { onSuccess: () => setup.reset() })} />
          <CodeForm label="Current code, for new backup codes" submitLabel="New backup codes" variant="secondary" busy={regenerate.isPending} error={regenerate.error}
            onSubmit={(code) => regenerate.mutate(code, { onSuccess: (result) => setBackupCodes(result?.backup_codes ?? []) })} />
        </div>
      ) : null}
      {backupCodes === null && !enabled ? (
        setup.data === undefined ? (
          <div className="stack">
            <p>Protect the account with a code from an authenticator app at each sign-in.</p>
            {setup.isError ? <Alert tone="error">{errorMessage(setup.error)}</Alert> : null}
            <div><Button variant="primary" onClick={() => setup.mutate()} busy={setup.isPending}>Set up two-factor</Button></div>
          </div>
        ) : (
          <Enrolment setup={setup.data} onEnabled={setBackupCodes} />
        )
      ) : null}
    </Card>
  );
}
