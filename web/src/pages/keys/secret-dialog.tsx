import { useConsoleConfig } from '../../api/api-context';
import { Button } from '../../ui/button';
import { CopyButton } from '../../ui/copy-button';
import { Alert } from '../../ui/feedback';
import { Dialog } from '../../ui/dialog';

/** The new key's secret, shown this once; closing needs an explicit press so it is not lost by a stray Escape. */
export function SecretDialog({ secret, name, onClose }: { secret: string | null; name: string; onClose: () => void }) {
  const config = useConsoleConfig();
  return (
    <Dialog open={secret !== null} title="Your new API key" onClose={onClose} requireExplicitClose>
      {secret === null ? null : (
        <div className="stack">
          <Alert tone="warning">Copy the key for <strong>{name}</strong> now. It is shown only once; we keep only a hash of it.</Alert>
          <div className="secret-row">
            <code className="secret" data-testid="new-key-secret">{secret}</code>
            <CopyButton text={secret} label="Copy key" />
          </div>
          {config.data === undefined ? null : <p className="field-hint">Base URL: <code>{config.data.api_base_url}/v1</code></p>}
          <div className="form-actions"><Button variant="primary" onClick={onClose}>I have copied the key</Button></div>
        </div>
      )}
    </Dialog>
  );
}
