import { loadOnce } from '../shared/load-once.js';
import { BackgroundJob } from '../shared/background-job.js';
import { checkedServers } from './checked-servers.js';
import type { McpHealthCheckDependencies, McpHealthCheckOptions, McpHealthChecks } from './mcp-health-checks.js';

/**
 * The schedule of the MCP servers' health checks (McpHealthChecks), kept apart from the checks: each pass first asks
 * the storage whether any server is to be checked, and only then loads the checks and with them the MCP client
 * modules; a gateway with no MCP servers never holds them. Same interval as the checks' own schedule (fixed, the
 * next pass an interval after the previous one ended); a load that fails is tried again at the next pass.
 */
export class McpHealthSchedule {
  readonly #checks = loadOnce(async (): Promise<McpHealthChecks> => {
    const { McpHealthChecks } = await import('./mcp-health-checks.js');
    return new McpHealthChecks(this.dependencies, this.options);
  });

  readonly #job = new BackgroundJob(() => this.#pass());
  #stopped = false;

  constructor(private readonly dependencies: McpHealthCheckDependencies, private readonly options: McpHealthCheckOptions) {}

  start(): void {
    if (this.#stopped) return;
    const { intervalMs } = this.options;
    this.#job.start({
      name: 'MCP health checks', baseMs: intervalMs, maxMs: intervalMs, firstPassAfterMs: Math.min(intervalMs, 1000),
      found: (found) => found, logger: this.dependencies.logger,
    });
  }

  async #pass(): Promise<boolean> {
    if (this.#checks.loaded() === null) {
      const servers = checkedServers(await this.dependencies.servers.list(), this.options.accountServers === true);
      if (servers.length === 0) return false;
    }
    const checks = await this.#checks.get();
    if (this.#stopped) return false;
    return (await checks.runOnce()) > 0;
  }

  /** Stops scheduling and ends the checks running (see McpHealthChecks.stop); settles once the pass has. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all([this.#checks.loaded()?.stop(), this.#job.stop()]);
  }
}
