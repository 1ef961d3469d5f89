import { lazy } from 'react';
import './operator.css';

/** The operator's pages, loaded only when an operator opens one. */
const lazyPage = <K extends string>(load: () => Promise<Record<K, React.ComponentType>>, name: K) => lazy(() => load().then((module) => ({ default: module[name] })));

export const OperatorOverviewPage = lazyPage(() => import('./overview-page'), 'OperatorOverviewPage');
export const OperatorChannelsPage = lazyPage(() => import('./channels-page'), 'OperatorChannelsPage');
export const OperatorModelsPage = lazyPage(() => import('./models-page'), 'OperatorModelsPage');
export const OperatorAccountsPage = lazyPage(() => import('./accounts-page'), 'OperatorAccountsPage');
export const OperatorTicketsPage = lazyPage(() => import('./tickets-page'), 'OperatorTicketsPage');
export const OperatorUsagePage = lazyPage(() => import('./usage-page'), 'OperatorUsagePage');
export const OperatorOffersPage = lazyPage(() => import('./offers-page'), 'OperatorOffersPage');
export const OperatorAuditPage = lazyPage(() => import('./audit-page'), 'OperatorAuditPage');
export const OperatorOperatorsPage = lazyPage(() => import('./operators-page'), 'OperatorOperatorsPage');
export const OperatorWebhooksPage = lazyPage(() => import('./webhooks-page'), 'OperatorWebhooksPage');
export const OperatorMcpServersPage = lazyPage(() => import('./mcp-servers-page'), 'OperatorMcpServersPage');
export const OperatorSsoPage = lazyPage(() => import('./sso-page'), 'OperatorSsoPage');
export const OperatorGuardrailsPage = lazyPage(() => import('./guardrails-page'), 'OperatorGuardrailsPage');

/** Navigation entries of the operator's pages (shown to operators only). */
export const operatorNavigation = [
  { to: '/operator', label: 'Overview' },
  { to: '/operator/channels', label: 'Channels' },
  { to: '/operator/models', label: 'Models and prices' },
  { to: '/operator/accounts', label: 'Accounts' },
  { to: '/operator/tickets', label: 'Support tickets' },
  { to: '/operator/usage', label: 'Usage explorer' },
  { to: '/operator/offers', label: 'Plans, codes, news' },
  { to: '/operator/guardrails', label: 'Guardrails' },
  { to: '/operator/operators', label: 'Operators' },
  { to: '/operator/audit', label: 'Audit log' },
  { to: '/operator/webhooks', label: 'Webhooks' },
  { to: '/operator/mcp-servers', label: 'MCP servers' },
  { to: '/operator/sso', label: 'Single sign-on' },
];
