import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import { forEachPooled } from '../shared/pooled.js';
import type { McpServer, McpServerHealth, McpServerRepository, McpToolSummary } from '../storage/repositories/mcp-server-repository.js';
import { checkedServers } from './checked-servers.js';
import { listUpstreamTools, withUpstream, type OutboundPolicy, type UpstreamTimeouts } from './upstream-session.js';

export interface McpHealthCheckOptions {
  /** Time between the end of one pass and the start of the next. */
  intervalMs: number;
  /** How long one server's check (connecting and listing its tools) may take before it counts as down. */
  timeoutMs: number;
  /** Servers checked at once at most. */
  concurrency: number;
  /** Accounts' own servers are checked too (MCP_ALLOW_ACCOUNT_SERVERS); off: they are not served, so not connected to. */
  accountServers?: boolean;
}

export interface McpHealthCheckDependencies {
  servers: McpServerRepository;
  clock: Clock;
  logger: Logger;
  outbound: OutboundPolicy;
}

/** The longest error text kept (a server's error page must not fill the row). */
const MAX_ERROR_LENGTH = 300;

/** A tool as the console shows it: its name, description and whether its server declares it read-only. */
export function toolSummary(tool: Tool): McpToolSummary {
  return { name: tool.name, description: tool.description ?? null, readOnly: tool.annotations?.readOnlyHint === true };
}

/**
 * Why a check failed, for the operator: the error's own message, single-line and bounded. Never a header value: the
 * server's headers are sent, not echoed, and any of their values found in the text is masked all the same.
 */
export function checkError(error: unknown, secrets: string[]): string {
  let text = error instanceof Error ? `${error.message}` : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : null;
  if (cause !== null && !text.includes(cause)) text = `${text}: ${cause}`;
  for (const secret of secrets) if (secret.length >= 4) text = text.split(secret).join('[redacted]');
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text || 'check failed';
}

class CheckTimedOut extends Error {
  override name = 'CheckTimedOut';
}

/**
 * Health checks of the registered MCP servers: every interval, each enabled server is connected to with its own
 * headers and asked for its tools, within a timeout; the result (healthy or not, how long it took, the tools listed,
 * the error) is kept on the server for /admin/mcp-servers and the console. A pass starts only after the previous one
 * ended, so slow servers never make passes pile up; at most `concurrency` servers are checked at once; a check of a
 * server changed while it ran is dropped. `stop` ends the schedule and does not wait for a check's timeout. The
 * interval is fixed (no idle backoff), so a server that goes down is marked so within an interval and a check.
 */
export class McpHealthChecks {
  readonly #job = new BackgroundJob(() => this.runOnce());
  readonly #abort = new AbortController();

  constructor(private readonly dependencies: McpHealthCheckDependencies, private readonly options: McpHealthCheckOptions) {}

  start(): void {
    if (this.#abort.signal.aborted) return;
    const { intervalMs } = this.options;
    this.#job.start({
      name: 'MCP health checks', baseMs: intervalMs, maxMs: intervalMs,
      // The first pass soon after start, so a restarted gateway shows fresh health without waiting a whole interval.
      firstPassAfterMs: Math.min(intervalMs, 1000),
      found: (checked) => checked > 0, logger: this.dependencies.logger,
    });
  }

  /** One pass over the enabled servers; settles with how many were checked. */
  async runOnce(): Promise<number> {
    const servers = checkedServers(await this.dependencies.servers.list(), this.options.accountServers === true);
    await forEachPooled(servers, this.options.concurrency, this.#abort.signal, async (server) => {
      const health = await this.check(server);
      if (health === null) return;
      await this.dependencies.servers.recordHealth(server.id, health, server.updatedAt);
      if (health.status === 'unhealthy') this.dependencies.logger.warn('MCP server health check failed', { mcpServer: server.name, error: health.error });
    });
    return servers.length;
  }

  /** Connects to one server and lists its tools; null when the checker stopped meanwhile (nothing is recorded). */
  async check(server: McpServer): Promise<McpServerHealth | null> {
    const health = await checkMcpServer(this.dependencies, server, this.options.timeoutMs, this.#abort.signal);
    return this.#abort.signal.aborted ? null : health;
  }

  /** Stops scheduling and ends the checks running; settles once the pass has. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('gateway stopping'));
    await this.#job.stop();
  }
}

/**
 * One check of a server: connect with its own headers and list every tool, the whole of it bounded by `timeoutMs`
 * and ended at once by `signal` (the connection then closes on its own within the timeout).
 */
export async function checkMcpServer(
  dependencies: Pick<McpHealthCheckDependencies, 'servers' | 'clock' | 'outbound'>,
  server: McpServer,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<McpServerHealth> {
  const { clock, servers, outbound } = dependencies;
  const started = clock.now();
  const headers = await servers.headersOf(server.id);
  const timeouts: UpstreamTimeouts = { connectMs: timeoutMs, listMs: timeoutMs, callMs: timeoutMs };
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const bounded = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimedOut(`no answer within ${Math.round(timeoutMs / 1000)}s`)), timeoutMs);
    onAbort = () => reject(new CheckTimedOut('check stopped'));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  const listing = withUpstream(server, headers, timeouts, (client) => listUpstreamTools(client, timeouts), outbound);
  listing.catch(() => {});
  try {
    const tools = await Promise.race([listing, bounded]);
    return { status: 'healthy', error: null, checkedAt: clock.now(), latencyMs: Math.max(0, clock.now() - started), tools: tools.map(toolSummary) };
  } catch (error) {
    return { status: 'unhealthy', error: checkError(error, Object.values(headers)), checkedAt: clock.now(), latencyMs: null, tools: [] };
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
  }
}
