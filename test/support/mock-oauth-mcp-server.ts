/**
 * An MCP server that requires OAuth 2.1 bearer tokens, and the token endpoint that issues them (client credentials
 * grant), both on 127.0.0.1 and built with the official SDK's server: the token endpoint accepts one client by HTTP
 * Basic or form credentials and issues tokens that expire after `expiresInSeconds`; the MCP server answers 401 to a
 * missing, unknown, expired or revoked token. Counters let tests prove a token was reused, renewed or retried.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface MockOAuthMcpServer {
  /** The MCP endpoint. */
  url: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Token requests received, and how each authenticated its client. */
  tokenRequests: Array<{ method: 'basic' | 'post' | 'none'; form: Record<string, string>; granted: boolean }>;
  /** MCP requests answered 401. */
  rejected: number;
  /** Tokens issued from now on live this long. */
  expiresInSeconds: number;
  /** Every token issued so far is refused from now on (as if the authorization server revoked them). */
  revokeAll(): void;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const formDecode = (text: string): string => decodeURIComponent(text.replace(/\+/g, ' '));

export async function startMockOAuthMcpServer(options: { clientId?: string; clientSecret?: string; expiresInSeconds?: number } = {}): Promise<MockOAuthMcpServer> {
  const clientId = options.clientId ?? 'gateway-client';
  const clientSecret = options.clientSecret ?? 'oauth-client-secret-9d2e';
  const tokens = new Map<string, number>();
  let issued = 0;
  const open = new Set<ServerResponse>();
  const state: MockOAuthMcpServer = {
    url: '', tokenUrl: '', clientId, clientSecret, tokenRequests: [], rejected: 0, expiresInSeconds: options.expiresInSeconds ?? 3600,
    revokeAll: () => tokens.clear(),
    close: async () => {
      for (const response of open) response.destroy();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };

  async function token(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const form = Object.fromEntries(new URLSearchParams(await readBody(request)));
    let method: 'basic' | 'post' | 'none' = 'none';
    let id = '';
    let secret = '';
    const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '');
    if (basic !== null) {
      method = 'basic';
      const [user = '', password = ''] = Buffer.from(basic[1] as string, 'base64').toString('utf8').split(':');
      id = formDecode(user);
      secret = formDecode(password);
    } else if (form.client_id !== undefined) {
      method = 'post';
      id = form.client_id;
      secret = form.client_secret ?? '';
    }
    const granted = form.grant_type === 'client_credentials' && id === clientId && secret === clientSecret
      && request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') === true;
    state.tokenRequests.push({ method, form, granted });
    if (!granted) {
      response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="token"' })
        .end(JSON.stringify({ error: 'invalid_client', error_description: 'Client authentication failed.' }));
      return;
    }
    issued += 1;
    const value = `tok-${issued}-${Math.random().toString(36).slice(2)}`;
    tokens.set(value, Date.now() + state.expiresInSeconds * 1000);
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify({ access_token: value, token_type: 'Bearer', expires_in: state.expiresInSeconds }));
  }

  async function mcp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
    const expiresAt = tokens.get(bearer);
    if (expiresAt === undefined || expiresAt <= Date.now()) {
      state.rejected += 1;
      response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' }).end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const server = new McpServer({ name: 'guarded', version: '1.0.0' });
    server.registerTool('whoami', { description: 'The bearer token it was called with' }, () => ({ content: [{ type: 'text', text: bearer }] }));
    server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text: `guarded: ${text}` }] }));
    const stateless = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void stateless.close();
      void server.close();
    });
    await server.connect(stateless);
    await stateless.handleRequest(request, response);
  }

  const http: Server = createServer((request, response) => {
    open.add(response);
    response.on('close', () => open.delete(response));
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const handler = path === '/oauth/token' && request.method === 'POST' ? token : path === '/mcp' ? mcp : null;
    if (handler === null) {
      response.writeHead(404).end();
      return;
    }
    handler(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}/mcp`;
  state.tokenUrl = `http://127.0.0.1:${port}/oauth/token`;
  return state;
}
