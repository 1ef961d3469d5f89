import { lazy, Suspense, type ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation, useSearchParams } from 'react-router-dom';
import { useSession } from './api/api-context';
import { AppShell } from './layout/app-shell';
import { AuthShell } from './layout/auth-shell';
import { Loading } from './ui/feedback';
import { SignInPage } from './pages/sign-in/sign-in-page';
import { safeNextPath } from './pages/sign-in/safe-next-path';
import { SignUpPage } from './pages/sign-up/sign-up-page';
import { VerifyEmailPage } from './pages/verify-email/verify-email-page';
import { ResetPasswordPage } from './pages/reset-password/reset-password-page';
import { KeysPage } from './pages/keys/keys-page';
import { SecurityPage } from './pages/security/security-page';
import { QuickstartPage } from './pages/quickstart/quickstart-page';
import { NotFoundPage } from './pages/not-found/not-found-page';
// Money and people (money-web branch).
import { BillingPage } from './pages/billing/billing-page';
import { SupportPage } from './pages/support/support-page';
import { ReferralsPage } from './pages/referrals/referrals-page';
import { MembersPage } from './pages/members/members-page';
import { InvitationPage } from './pages/invitation/invitation-page';
import { AlertsPage } from './pages/alerts/alerts-page';
import { WebhooksPage } from './pages/webhooks/webhooks-page';
import { GuardrailsPage } from './pages/guardrails/guardrails-page';
import { PlansPage } from './pages/plans/plans-page';
// Everyday use: the models and their prices, the money trail.
import { ModelsPage } from './pages/models/models-page';
import { TransactionsPage } from './pages/transactions/transactions-page';
import { AnnouncementsPage } from './pages/announcements/announcements';
import { ProjectsPage } from './pages/projects/projects-page';
import { ProjectDetailPage } from './pages/projects/project-detail-page';
import { CustomersPage } from './pages/customers/customers-page';
import { BatchesPage } from './pages/batches/batches-page';
import { McpServersPage } from './pages/mcp-servers/mcp-servers-page';

// Operator console (web/src/pages/operator): pages for operators of the gateway, each behind RequireOperator.
import { RequireOperator } from './pages/operator/require-operator';
import { OperatorSetupPage } from './pages/operator/operator-setup-page';
import {
  OperatorAccountsPage, OperatorAuditPage, OperatorChannelsPage, OperatorModelsPage, OperatorOffersPage, OperatorOperatorsPage, OperatorOverviewPage, OperatorTicketsPage, OperatorUsagePage, OperatorWebhooksPage, OperatorMcpServersPage,
  OperatorSsoPage, OperatorGuardrailsPage,
} from './pages/operator/operator-routes';
import { SingleSignOnPage } from './pages/single-sign-on/single-sign-on-page';

// The charts library is the largest dependency: only the usage page loads it.
const UsagePage = lazy(() => import('./pages/usage/usage-page').then((module) => ({ default: module.UsagePage })));
const PlaygroundPage = lazy(() => import('./pages/playground/playground-page').then((module) => ({ default: module.PlaygroundPage })));

function RequireSession({ children }: { children: ReactNode }) {
  const session = useSession();
  const location = useLocation();
  if (session.isPending) return <Loading />;
  if (session.data?.user == null) {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  return <AppShell>{children}</AppShell>;
}

function AnonymousOnly({ children }: { children: ReactNode }) {
  const session = useSession();
  const [searchParams] = useSearchParams();
  if (session.isPending) return <Loading />;
  if (session.data?.user != null) return <Navigate to={safeNextPath(searchParams.get('next'))} replace />;
  return <AuthShell>{children}</AuthShell>;
}

export function App() {
  return (
    <Suspense fallback={<Loading />}>
      <Routes>
        <Route path="/" element={<Navigate to="/keys" replace />} />
        <Route path="/sign-in" element={<AnonymousOnly><SignInPage /></AnonymousOnly>} />
        <Route path="/sign-up" element={<AnonymousOnly><SignUpPage /></AnonymousOnly>} />
        <Route path="/verify-email" element={<AuthShell><VerifyEmailPage /></AuthShell>} />
        <Route path="/reset-password" element={<AuthShell><ResetPasswordPage /></AuthShell>} />
        <Route path="/keys" element={<RequireSession><KeysPage /></RequireSession>} />
        <Route path="/usage" element={<RequireSession><UsagePage /></RequireSession>} />
        <Route path="/batches" element={<RequireSession><BatchesPage /></RequireSession>} />
        <Route path="/mcp-servers" element={<RequireSession><McpServersPage /></RequireSession>} />
        <Route path="/playground" element={<RequireSession><PlaygroundPage /></RequireSession>} />
        <Route path="/quickstart" element={<RequireSession><QuickstartPage /></RequireSession>} />
        <Route path="/security" element={<RequireSession><SecurityPage /></RequireSession>} />
        {/* Money and people (money-web branch). */}
        <Route path="/billing" element={<RequireSession><BillingPage /></RequireSession>} />
        <Route path="/referrals" element={<RequireSession><ReferralsPage /></RequireSession>} />
        <Route path="/members" element={<RequireSession><MembersPage /></RequireSession>} />
        <Route path="/projects" element={<RequireSession><ProjectsPage /></RequireSession>} />
        <Route path="/projects/:id" element={<RequireSession><ProjectDetailPage /></RequireSession>} />
        <Route path="/customers" element={<RequireSession><CustomersPage /></RequireSession>} />
        <Route path="/plans" element={<RequireSession><PlansPage /></RequireSession>} />
        <Route path="/alerts" element={<RequireSession><AlertsPage /></RequireSession>} />
        <Route path="/webhooks" element={<RequireSession><WebhooksPage /></RequireSession>} />
        <Route path="/guardrails" element={<RequireSession><GuardrailsPage /></RequireSession>} />
        <Route path="/single-sign-on" element={<RequireSession><SingleSignOnPage /></RequireSession>} />
        <Route path="/support" element={<RequireSession><SupportPage /></RequireSession>} />
        <Route path="/models" element={<RequireSession><ModelsPage /></RequireSession>} />
        <Route path="/transactions" element={<RequireSession><TransactionsPage /></RequireSession>} />
        <Route path="/announcements" element={<RequireSession><AnnouncementsPage /></RequireSession>} />
        <Route path="/invitation" element={<AuthShell><InvitationPage /></AuthShell>} />

        {/* Operator console */}
        <Route path="/operator/setup" element={<AuthShell><OperatorSetupPage /></AuthShell>} />
        <Route path="/operator" element={<RequireSession><RequireOperator><OperatorOverviewPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/channels" element={<RequireSession><RequireOperator><OperatorChannelsPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/models" element={<RequireSession><RequireOperator><OperatorModelsPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/accounts" element={<RequireSession><RequireOperator><OperatorAccountsPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/tickets" element={<RequireSession><RequireOperator><OperatorTicketsPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/usage" element={<RequireSession><RequireOperator><OperatorUsagePage /></RequireOperator></RequireSession>} />
        <Route path="/operator/offers" element={<RequireSession><RequireOperator><OperatorOffersPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/operators" element={<RequireSession><RequireOperator><OperatorOperatorsPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/audit" element={<RequireSession><RequireOperator><OperatorAuditPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/webhooks" element={<RequireSession><RequireOperator><OperatorWebhooksPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/mcp-servers" element={<RequireSession><RequireOperator><OperatorMcpServersPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/sso" element={<RequireSession><RequireOperator><OperatorSsoPage /></RequireOperator></RequireSession>} />
        <Route path="/operator/guardrails" element={<RequireSession><RequireOperator><OperatorGuardrailsPage /></RequireOperator></RequireSession>} />
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </Suspense>
  );
}
