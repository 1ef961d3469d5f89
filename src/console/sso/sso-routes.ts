import type { Router } from '../../http/router.js';
import type { ConsoleDeps } from '../console-deps.js';
import { createSsoClients } from './sso-connections.js';
import { addSsoSettingsRoutes } from './sso-settings-routes.js';
import { addSsoSignInRoutes } from './sso-sign-in-routes.js';

/** Single sign-on in the console (docs/single-sign-on.md): sign-in through OpenID Connect, and its settings. */
export function addSsoRoutes(router: Router, deps: ConsoleDeps): void {
  const clients = createSsoClients(deps.services);
  addSsoSignInRoutes(router, deps, clients);
  addSsoSettingsRoutes(router, deps, clients);
}
