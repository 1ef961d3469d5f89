import { SSO_SETTINGS_ROUTES } from './sso-settings-routes.js';
import { SSO_SIGN_IN_ROUTES } from './sso-sign-in-routes.js';

/** Single sign-on in the console (docs/single-sign-on.md): sign-in through OpenID Connect, and its settings. */
export const SSO_ROUTES = [...SSO_SIGN_IN_ROUTES, ...SSO_SETTINGS_ROUTES];
