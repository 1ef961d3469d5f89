import type { ReactNode } from 'react';
import { useConsoleConfig } from '../api/api-context';
import { useDocumentTitle } from './use-document-title';

/** The frame of the signed-out pages: a narrow centred card. */
export function AuthShell({ children }: { children: ReactNode }) {
  const config = useConsoleConfig();
  const product = config.data?.product_name ?? 'Console';
  useDocumentTitle(null, product);
  return (
    <div className="auth-shell">
      <main className="auth-main" id="main">
        <p className="brand"><span className="brand-mark" aria-hidden="true">u</span>{product}</p>
        {children}
      </main>
    </div>
  );
}
