import { Link } from 'react-router-dom';
import { useDocumentTitle } from '../../layout/use-document-title';

export function NotFoundPage() {
  useDocumentTitle('Not found');
  return (
    <main className="auth-shell" id="main">
      <div className="auth-main stack">
        <h1>Page not found</h1>
        <p>There is no console page at this address.</p>
        <p><Link to="/keys">Go to the console</Link></p>
      </div>
    </main>
  );
}
