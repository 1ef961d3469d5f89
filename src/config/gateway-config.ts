import type { LogLevel } from '../shared/logger.js';

export interface ProviderShortcut {
  apiKey: string;
  baseUrl: string | null;
}

/** How the caller's IP is found when the gateway sits behind proxies. */
export type TrustProxy =
  | { mode: 'none' }
  /** Trust every hop: the left-most X-Forwarded-For address is the caller. */
  | { mode: 'all' }
  /** Trust only these proxy addresses/ranges: walk X-Forwarded-For from the right, skipping trusted hops. */
  | { mode: 'list'; ranges: string[] };

export interface GatewayConfig {
  host: string;
  port: number;
  consolePort: number;
  databaseUrl: string;
  redisUrl: string | null;
  adminToken: string | null;
  configFile: string | null;
  smtpUrl: string | null;
  workers: number;
  dataDirectory: string;
  /** Key for encrypting upstream credentials at rest; when null one is generated under the data directory. */
  secretKey: string | null;
  trustProxy: TrustProxy;
  maxBodyBytes: number;
  /** Brand of the `<brand>_sk_live_` key form. */
  keyBrand: string;
  publicRateLimitPerMinute: number;
  fxSourceUrl: string | null;
  fxRefreshSeconds: number;
  logLevel: LogLevel;
  providers: {
    openai: ProviderShortcut | null;
    anthropic: ProviderShortcut | null;
    gemini: ProviderShortcut | null;
  };
}
