/** The part of the `oidc-provider` package the single sign-on tests use (it ships no types of its own). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    jti: string;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    save(): Promise<string>;
  }

  interface GrantConstructor {
    new (input: { clientId: string; accountId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }

  interface OidcContext {
    provider: Provider;
    session?: { accountId?: string; grantIdFor(clientId: string, grantId?: string): string | undefined };
    client?: { clientId: string };
    params?: Record<string, unknown>;
  }

  interface KoaContext {
    path: string;
    method: string;
    status: number;
    body: unknown;
    request: unknown;
    oidc: OidcContext | undefined;
  }

  interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
  }

  export interface Configuration {
    clients?: Array<Record<string, unknown>>;
    jwks?: { keys: unknown[] };
    cookies?: { keys: string[] };
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    pkce?: { required?: (context: KoaContext, client: unknown) => boolean };
    features?: Record<string, { enabled: boolean }>;
    interactions?: { url: (context: KoaContext, interaction: { uid: string }) => string };
    ttl?: Record<string, number | ((context: KoaContext, token: unknown, client: unknown) => number)>;
    findAccount?: (context: KoaContext, id: string) => { accountId: string; claims: () => Record<string, unknown> } | undefined;
    loadExistingGrant?: (context: KoaContext & { oidc: OidcContext }) => Promise<Grant | undefined>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    Grant: GrantConstructor;
    use(middleware: (context: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(request: IncomingMessage, response: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
}
