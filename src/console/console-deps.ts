import type { GatewayServices } from '../services.js';

/** Where the console and the API are reached. Known only once both listeners listen, hence functions. */
export interface ConsoleUrls {
  /** The console's public origin (CONSOLE_URL, or the console listener's address). */
  console(): string;
  /** The API's base address shown to users (API_PUBLIC_URL, or the API listener's address). */
  apiPublic(): string;
  /** Where this process reaches its own API listener (the playground's calls). */
  apiInternal(): string;
}

/** What the console's routes use: the gateway's services (the console is one of their clients) and its addresses. */
export interface ConsoleDeps {
  services: GatewayServices;
  urls: ConsoleUrls;
}

/** True when the console is served over TLS: cookies get `Secure` and the `__Host-` prefix. */
export function consoleUsesTls(deps: ConsoleDeps): boolean {
  return deps.urls.console().startsWith('https://');
}
