/**
 * A real MCP server for tests, built with the official SDK's server on 127.0.0.1: Streamable HTTP (stateless: a
 * server and transport per request, as the SDK's stateless example does) or the older HTTP+SSE transport (GET /sse
 * opens the stream, POST /messages?sessionId=… carries messages). Its tools: `echo` (text back), `add` (a + b),
 * `fail` (a tool error, isError), `hang` (never answers until the server closes), and `whoami` (the Authorization
 * header it was called with, to prove the gateway sends the sealed headers). Its prompts: `greet` (argument `who`; a
 * message naming the server, and a link to its readme). Its resources: `note://<name>/readme` (text naming the
 * server) and the template `file:///logs/{day}` (text naming the server and the day). Prompt gets and resource
 * reads are counted in `calls` as `prompt:<name>` and `read:<uri>`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface MockMcpServer {
  url: string;
  /** Tool calls received, by tool name. */
  calls: string[];
  /** Requests received (any method), to prove a refused client never reached it. */
  requests: number;
  close(): Promise<void>;
}

export interface MockMcpOptions {
  /** Adds the tool `slow`: three `notifications/progress` (when the caller sent a progress token) 50 ms apart, then `<name> done`. */
  slowTool?: boolean;
  /** The local address it listens on (127.0.0.1 unless given). */
  host?: string;
}

function buildServer(name: string, calls: string[], authorization: () => string, options: MockMcpOptions = {}): McpServer {
  const server = new McpServer({ name, version: '1.0.0' });
  if (options.slowTool === true) {
    server.registerTool('slow', { description: 'Reports progress, then answers' }, async (extra) => {
      calls.push('slow');
      const token = extra._meta?.progressToken;
      for (let step = 1; step <= 3; step += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: 3, message: `step ${step}` } });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { content: [{ type: 'text', text: `${name} done` }] };
    });
  }
  server.registerTool('echo', { description: `Echoes text (${name})`, inputSchema: { text: z.string() } }, ({ text }) => {
    calls.push('echo');
    return { content: [{ type: 'text', text: `${name}: ${text}` }] };
  });
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => {
    calls.push('add');
    return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b }, };
  });
  server.registerTool('fail', { description: 'Always fails' }, () => {
    calls.push('fail');
    return { content: [{ type: 'text', text: 'it failed' }], isError: true };
  });
  server.registerTool('hang', { description: 'Never answers' }, () => {
    calls.push('hang');
    return new Promise(() => {});
  });
  server.registerTool('whoami', { description: 'The Authorization header it was called with' }, () => {
    calls.push('whoami');
    return { content: [{ type: 'text', text: authorization() }] };
  });
  server.registerPrompt('greet', { description: `Greets someone (${name})`, argsSchema: { who: z.string() } }, ({ who }) => {
    calls.push('prompt:greet');
    return {
      description: `A greeting from ${name}`,
      messages: [
        { role: 'user', content: { type: 'text', text: `${name} says hello to ${who}` } },
        { role: 'user', content: { type: 'resource_link', uri: `note://${name}/readme`, name: 'readme' } },
      ],
    };
  });
  server.registerResource('readme', `note://${name}/readme`, { description: `The readme of ${name}`, mimeType: 'text/plain' }, (uri) => {
    calls.push(`read:${uri.href}`);
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `readme of ${name}` }] };
  });
  server.registerResource('logs', new ResourceTemplate('file:///logs/{day}', { list: undefined }), { description: 'A day of logs', mimeType: 'text/plain' }, (uri, variables) => {
    calls.push(`read:${uri.href}`);
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${name} logs of ${String(variables.day)}` }] };
  });
  return server;
}

export async function startMockMcpServer(name: string, transport: 'streamable-http' | 'sse', options: MockMcpOptions = {}): Promise<MockMcpServer> {
  const calls: string[] = [];
  const sseSessions = new Map<string, SSEServerTransport>();
  const open = new Set<ServerResponse>();
  let lastAuthorization = '';
  let requests = 0;
  const http: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests += 1;
    lastAuthorization = request.headers.authorization ?? '';
    open.add(response);
    response.on('close', () => open.delete(response));
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      if (transport === 'streamable-http' && url.pathname === '/mcp') {
        if (request.method !== 'POST') {
          response.writeHead(405, { Allow: 'POST' }).end();
          return;
        }
        const server = buildServer(name, calls, () => lastAuthorization, options);
        const stateless = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        response.on('close', () => {
          void stateless.close();
          void server.close();
        });
        await server.connect(stateless);
        await stateless.handleRequest(request, response);
        return;
      }
      if (transport === 'sse' && url.pathname === '/sse' && request.method === 'GET') {
        const sse = new SSEServerTransport('/messages', response);
        sseSessions.set(sse.sessionId, sse);
        response.on('close', () => sseSessions.delete(sse.sessionId));
        await buildServer(name, calls, () => lastAuthorization, options).connect(sse);
        return;
      }
      if (transport === 'sse' && url.pathname === '/messages' && request.method === 'POST') {
        const sse = sseSessions.get(url.searchParams.get('sessionId') ?? '');
        if (sse === undefined) {
          response.writeHead(404).end();
          return;
        }
        await sse.handlePostMessage(request, response);
        return;
      }
      response.writeHead(404).end();
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => http.listen(0, host, resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${host}:${port}${transport === 'sse' ? '/sse' : '/mcp'}`,
    calls,
    get requests() { return requests; },
    async close() {
      for (const response of open) response.destroy();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
