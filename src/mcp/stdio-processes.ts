import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { McpServer, McpServerRepository } from '../storage/repositories/mcp-server-repository.js';
import { loadMcpClientSdk } from './mcp-sdk.js';
import type { ProgramTransport, StdioLimits } from './stdio-transport.js';

export interface StdioProcessDependencies {
  servers: Pick<McpServerRepository, 'list' | 'stdioEnvOf'>;
  clock: Clock;
  logger: Logger;
  clientInfo: { name: string; version: string };
  limits?: StdioLimits;
}

/** The first restart's delay; each failure in a row doubles it up to the longest. */
const FIRST_RESTART_MS = 500;
const LONGEST_RESTART_MS = 30_000;
/** A process that ran this long before it died starts again from the first delay. */
const STABLE_MS = 60_000;
/** How often processes of servers deleted, disabled or changed (on any instance) are ended. */
const SWEEP_MS = 30_000;

/** A local server could not be started or is waiting to be restarted. */
export class LocalServerUnavailable extends Error {
  override name = 'LocalServerUnavailable';
}

/** One stdio server's process and its MCP session, supervised: restarted after it dies, with backoff. */
class SupervisedProcess {
  #client: Client | null = null;
  #transport: ProgramTransport | null = null;
  #starting: Promise<Client> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #failures = 0;
  #startedAt = 0;
  #restartAt = 0;
  #lastError: string | null = null;
  #stopped = false;
  #draining = false;

  constructor(readonly server: McpServer, private readonly dependencies: StdioProcessDependencies) {}

  get pid(): number | null {
    return this.#transport?.pid ?? null;
  }

  /** The connected session, the process started (or restarted) first if need be, within `waitMs`. */
  async client(waitMs: number): Promise<Client> {
    if (this.#client !== null) return this.#client;
    if (this.#stopped) throw new LocalServerUnavailable(`The local MCP server '${this.server.name}' was stopped.`);
    if (this.#starting === null) {
      const wait = this.#restartAt - this.dependencies.clock.now();
      if (wait > waitMs) throw new LocalServerUnavailable(`The local MCP server '${this.server.name}' restarts in ${Math.ceil(wait / 1000)}s (${this.#lastError ?? 'it stopped'}).`);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
      if (this.#client !== null) return this.#client;
      this.#starting ??= this.#start();
    }
    const starting = this.#starting;
    // Awaited below within the wait; a start that ends after it is not left unhandled.
    starting.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LocalServerUnavailable(`The local MCP server '${this.server.name}' did not start within ${Math.round(waitMs / 1000)}s.`)), waitMs);
      timer.unref();
    });
    try {
      return await Promise.race([starting, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #start(): Promise<Client> {
    const { stdio } = this.server;
    try {
      if (stdio === null) throw new LocalServerUnavailable(`The MCP server '${this.server.name}' is no stdio server.`);
      const env = await this.dependencies.servers.stdioEnvOf(this.server.id);
      // The transport and the SDK's client load with the first local server started, not with the gateway.
      const [{ DEFAULT_STDIO_LIMITS, ProgramTransport }, { Client }] = await Promise.all([import('./stdio-transport.js'), loadMcpClientSdk()]);
      // Stopped while the program's environment and the SDK loaded: it is never started.
      if (this.#stopped) throw new LocalServerUnavailable(`The local MCP server '${this.server.name}' was stopped.`);
      const transport = new ProgramTransport({ command: stdio.command, args: stdio.args, env }, this.dependencies.limits ?? DEFAULT_STDIO_LIMITS);
      const client = new Client(this.dependencies.clientInfo, { capabilities: {} });
      this.#transport = transport;
      // Errors of single lines are the program's; they are not the gateway's to raise.
      client.onerror = () => {};
      client.onclose = () => this.#died(transport);
      try {
        await client.connect(transport, { timeout: 30_000 });
      } catch (error) {
        await transport.close().catch(() => {});
        const ended = transport.exit === null ? '' : ` (${transport.exit}${transport.stderrTail() === '' ? '' : `: ${transport.stderrTail()}`})`;
        throw new LocalServerUnavailable(`The local MCP server '${this.server.name}' did not start: ${error instanceof Error ? error.message : 'failed'}${ended}`);
      }
      if (this.#stopped) {
        await client.close().catch(() => {});
        throw new LocalServerUnavailable(`The local MCP server '${this.server.name}' was stopped.`);
      }
      this.#startedAt = this.dependencies.clock.now();
      this.#client = client;
      this.dependencies.logger.info('local MCP server started', { mcpServer: this.server.name, pid: transport.pid });
      return client;
    } catch (error) {
      this.#failed(error instanceof Error ? error.message : 'did not start');
      throw error instanceof LocalServerUnavailable ? error : new LocalServerUnavailable(`The local MCP server '${this.server.name}' did not start.`);
    } finally {
      this.#starting = null;
    }
  }

  /** The process ended: unless the gateway ended it, it is started again after the backoff. */
  #died(transport: ProgramTransport): void {
    if (this.#transport !== transport || this.#client === null) return;
    this.#client = null;
    if (this.#stopped) return;
    const ranMs = this.dependencies.clock.now() - this.#startedAt;
    if (ranMs >= STABLE_MS) this.#failures = 0;
    const tail = transport.stderrTail();
    this.dependencies.logger.warn('local MCP server exited', { mcpServer: this.server.name, exit: transport.exit ?? 'unknown' });
    this.#failed(`it exited (${transport.exit ?? 'unknown'})${tail === '' ? '' : `: ${tail}`}`);
  }

  #failed(reason: string): void {
    this.#lastError = reason;
    if (this.#stopped || this.#draining) return;
    const delay = Math.min(LONGEST_RESTART_MS, FIRST_RESTART_MS * 2 ** this.#failures);
    this.#failures += 1;
    this.#restartAt = this.dependencies.clock.now() + delay;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#stopped || this.#client !== null || this.#starting !== null) return;
      this.#starting = this.#start();
      this.#starting.catch(() => {});
    }, delay);
    this.#timer.unref();
  }

  /**
   * The gateway drains: the process is not restarted any more, and one not serving yet (still starting, or waiting to
   * restart) is ended now; a running one keeps serving the calls in flight until `stop`.
   */
  async drain(): Promise<void> {
    this.#draining = true;
    if (this.#client === null) await this.stop();
  }

  /**
   * Ends the process for good (its server was changed, deleted, or the gateway stops). A process still starting is
   * ended at once, not after its start times out: its `initialize` then fails and the start settles.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const starting = this.#starting;
    if (starting !== null) {
      await this.#transport?.close().catch(() => {});
      await starting.catch(() => {});
    }
    const client = this.#client;
    this.#client = null;
    await (client?.close() ?? this.#transport?.close())?.catch(() => {});
  }
}

/**
 * The processes of the stdio servers on this instance: each started when first used, kept running for every call,
 * restarted with backoff when it dies, and ended when its server is changed, disabled or deleted, and when the gateway
 * stops (those still starting as soon as it starts draining). A server changed on another instance is noticed by its version on the next use, and by a periodic sweep.
 */
export class StdioProcesses {
  readonly #processes = new Map<string, SupervisedProcess>();
  #sweep: NodeJS.Timeout | null = null;
  #closed = false;
  #draining: Promise<unknown> = Promise.resolve();

  constructor(private readonly dependencies: StdioProcessDependencies) {}

  /** Runs `use` with the server's session (one process shared by every call of the server). */
  async use<T>(server: McpServer, waitMs: number, use: (client: Client) => Promise<T>): Promise<T> {
    if (this.#closed) throw new LocalServerUnavailable('The gateway is stopping.');
    let supervised = this.#processes.get(server.id);
    if (supervised !== undefined && supervised.server.updatedAt !== server.updatedAt) {
      this.#processes.delete(server.id);
      void supervised.stop();
      supervised = undefined;
    }
    if (supervised === undefined) {
      supervised = new SupervisedProcess(server, this.dependencies);
      this.#processes.set(server.id, supervised);
      this.#startSweeping();
    }
    return use(await supervised.client(waitMs));
  }

  /** The process id of a server's running process (null: none), for the operator. */
  pidOf(serverId: string): number | null {
    return this.#processes.get(serverId)?.pid ?? null;
  }

  /** Ends the process of a server changed or deleted. */
  async stop(serverId: string): Promise<void> {
    const supervised = this.#processes.get(serverId);
    this.#processes.delete(serverId);
    await supervised?.stop();
  }

  /**
   * The gateway starts draining: no process is started from now on, and those still starting are ended at once, so a
   * slow start neither holds the gateway's shutdown (the requests waiting on it fail now) nor outlives it; running
   * processes serve the calls in flight until `close`.
   */
  drain(): void {
    this.#closed = true;
    this.#draining = Promise.all([...this.#processes.values()].map((supervised) => supervised.drain()));
  }

  /** Ends every process (the gateway stops or drains). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#draining;
    if (this.#sweep !== null) clearInterval(this.#sweep);
    this.#sweep = null;
    const all = [...this.#processes.values()];
    this.#processes.clear();
    await Promise.all(all.map((supervised) => supervised.stop()));
  }

  #startSweeping(): void {
    if (this.#sweep !== null) return;
    this.#sweep = setInterval(() => {
      void this.sweep().catch((error: unknown) => this.dependencies.logger.warn('local MCP server sweep failed', { error: error instanceof Error ? error.message : 'unknown' }));
    }, SWEEP_MS);
    this.#sweep.unref();
  }

  /** Ends the processes whose server is gone, disabled or changed since they started. */
  async sweep(): Promise<void> {
    const current = new Map((await this.dependencies.servers.list()).map((server) => [server.id, server]));
    for (const [id, supervised] of this.#processes) {
      const server = current.get(id);
      if (server === undefined || !server.enabled || server.transport !== 'stdio' || server.updatedAt !== supervised.server.updatedAt) await this.stop(id);
    }
  }
}
