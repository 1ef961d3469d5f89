import { useEffect, useRef, useState, type ReactNode } from 'react';
import { NavLink, useLocation, useNavigate } from 'react-router-dom';
import * as DropdownMenu from '@radix-ui/react-dropdown-menu';
import { useApi, useConsoleConfig, useSession } from '../api/api-context';
import { errorMessage } from '../api/client';
import { Alert } from '../ui/feedback';
import { Button } from '../ui/button';
import { AccountSwitcherItems } from './account-switcher';
import { ThemeMenuItems } from './theme';
import { AnnouncementBanner } from '../pages/announcements/announcements';
import { canManageMcpServers } from '../pages/mcp-servers/mcp-servers-page';

// Operator console: its navigation, shown to operators only.
import { operatorNavigation } from '../pages/operator/operator-routes';
import { useOperatorMe } from '../pages/operator/operator-queries';

/** The account's pages; `shownTo` hides one from roles that cannot use it at all (its page still says why). */
const navigation: { to: string; label: string; shownTo?: (role: string | null | undefined) => boolean }[] = [
  { to: '/keys', label: 'API keys' },
  { to: '/projects', label: 'Projects' },
  { to: '/customers', label: 'End customers' },
  { to: '/guardrails', label: 'Guardrails' },
  { to: '/models', label: 'Models' },
  { to: '/usage', label: 'Usage' },
  { to: '/batches', label: 'Batches' },
  { to: '/mcp-servers', label: 'MCP servers', shownTo: canManageMcpServers },
  { to: '/playground', label: 'Playground' },
  { to: '/quickstart', label: 'Quickstart' },
  // Money and people (money-web branch).
  { to: '/billing', label: 'Billing' },
  { to: '/transactions', label: 'Transactions' },
  { to: '/plans', label: 'Plans' },
  { to: '/referrals', label: 'Referrals' },
  { to: '/members', label: 'Members' },
  { to: '/alerts', label: 'Alerts' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/single-sign-on', label: 'Single sign-on' },
  { to: '/support', label: 'Support' },
  { to: '/announcements', label: 'Announcements' },
  { to: '/security', label: 'Security' },
];

function VerifyEmailBanner({ mailConfigured }: { mailConfigured: boolean }) {
  const api = useApi();
  const [state, setState] = useState<'idle' | 'sending' | 'sent' | string>('idle');
  const resend = async () => {
    setState('sending');
    try {
      await api.post('/api/auth/verify-email/resend');
      setState('sent');
    } catch (error) {
      setState(errorMessage(error));
    }
  };
  if (!mailConfigured) {
    return <Alert tone="warning">Confirm your email address to create API keys, invite members, turn on two-factor sign-in, top up or write to support. This gateway sends no mail yet, so its operator finds your link in the gateway's log.</Alert>;
  }
  return (
    <Alert tone="warning">
      Confirm your email address to create API keys, invite members, turn on two-factor sign-in, top up or write to support: open the link we mailed you.{' '}
      {state === 'sent' ? <strong>A new link is on its way.</strong> : (
        <Button variant="ghost" onClick={() => void resend()} busy={state === 'sending'}>Send the link again</Button>
      )}
      {state !== 'idle' && state !== 'sending' && state !== 'sent' ? <span> {state}</span> : null}
    </Alert>
  );
}

/** The signed-in frame: skip link, header with the account menu, navigation, and the page. */
export function AppShell({ children }: { children: ReactNode }) {
  const api = useApi();
  const session = useSession();
  const config = useConsoleConfig();
  const navigate = useNavigate();
  const location = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const user = session.data?.user;
  const operator = useOperatorMe();

  // A route change moves focus to the new page's heading region, as a full page load would.
  useEffect(() => {
    setMenuOpen(false);
    mainRef.current?.focus({ preventScroll: true });
  }, [location.pathname]);

  const signOut = async (everywhere: boolean) => {
    setSignOutError(null);
    try {
      await api.post(everywhere ? '/api/auth/sign-out-everywhere' : '/api/auth/sign-out');
      // A full load: nothing of the old session stays in memory (query cache, CSRF token, form state).
      window.location.replace('/sign-in');
    } catch (error) {
      setSignOutError(errorMessage(error));
    }
  };

  return (
    <div className="app-shell">
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="top-bar">
        <NavLink to="/keys" className="brand"><span className="brand-mark" aria-hidden="true">u</span>{config.data?.product_name ?? 'Console'}</NavLink>
        <button type="button" className="menu-toggle button button-ghost" aria-expanded={menuOpen} aria-controls="primary-navigation" onClick={() => setMenuOpen((open) => !open)}>
          Menu
        </button>
        <DropdownMenu.Root modal={false}>
          <DropdownMenu.Trigger asChild>
            <button type="button" className="account-button button button-ghost" aria-label={`Account menu for ${user?.email ?? ''}`}>
              <span className="account-email">{user?.email}</span>
              <span aria-hidden="true">▾</span>
            </button>
          </DropdownMenu.Trigger>
          <DropdownMenu.Portal>
            <DropdownMenu.Content className="menu" align="end" sideOffset={6}>
              {/* Members of several accounts (money-web branch). */}
              <AccountSwitcherItems />
              <DropdownMenu.Item className="menu-item" onSelect={() => navigate('/security')}>Security and sessions</DropdownMenu.Item>
              <DropdownMenu.Separator className="menu-separator" />
              <ThemeMenuItems />
              <DropdownMenu.Separator className="menu-separator" />
              <DropdownMenu.Item className="menu-item" onSelect={() => void signOut(false)}>Sign out</DropdownMenu.Item>
              <DropdownMenu.Item className="menu-item" onSelect={() => void signOut(true)}>Sign out everywhere</DropdownMenu.Item>
            </DropdownMenu.Content>
          </DropdownMenu.Portal>
        </DropdownMenu.Root>
      </header>
      <div className="app-body">
        <nav id="primary-navigation" aria-label="Console" className={menuOpen ? 'side-nav open' : 'side-nav'}>
          <ul>
            {navigation.filter((item) => item.shownTo === undefined || item.shownTo(session.data?.role)).map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} className={({ isActive }) => (isActive ? 'nav-link active' : 'nav-link')}>{item.label}</NavLink>
              </li>
            ))}
          </ul>
          {operator.data?.disabled === false ? (
            <>
              <h2 className="nav-heading">Operator</h2>
              <ul aria-label="Operator">
                {operatorNavigation.map((item) => (
                  <li key={item.to}>
                    <NavLink to={item.to} end className={({ isActive }) => (isActive ? 'nav-link active' : 'nav-link')}>{item.label}</NavLink>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </nav>
        <main id="main" ref={mainRef} tabIndex={-1} className="app-main">
          {signOutError === null ? null : <Alert tone="error">{signOutError}</Alert>}
          {user != null && !user.email_verified ? <VerifyEmailBanner mailConfigured={config.data?.mail_configured !== false} /> : null}
          <AnnouncementBanner />
          {children}
        </main>
      </div>
    </div>
  );
}
