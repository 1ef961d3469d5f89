import { CopyButton } from '../../ui/copy-button';
import { Alert } from '../../ui/feedback';

/** Backup codes, shown once: each signs in once when the authenticator is lost. */
export function BackupCodes({ codes }: { codes: string[] }) {
  return (
    <div className="stack">
      <Alert tone="warning">Save these backup codes now; they are not shown again. Each one signs you in once.</Alert>
      <ol className="backup-codes" aria-label="Backup codes">
        {codes.map((code) => <li key={code} className="mono">{code}</li>)}
      </ol>
      <div><CopyButton text={codes.join('\n')} label="Copy the codes" /></div>
    </div>
  );
}
