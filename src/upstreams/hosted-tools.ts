import type { ChatRequest, HostedTool } from '../ir/chat-request.js';
import type { Channel } from '../domain/records.js';

/**
 * Whether a channel maps hosted tools (web search) to its own equivalent for a public model. The channel setting
 * `hosted_tools` switches it: `false` (or "drop") for every model of the channel, or an object by public model id,
 * e.g. `{"codex-gemini": false}`. Default: mapped.
 */
export function mapsHostedTools(channel: Channel, publicModel: string): boolean {
  const setting = channel.settings.hosted_tools;
  if (setting === false || setting === 'drop') return false;
  if (typeof setting === 'object' && setting !== null && !Array.isArray(setting)) {
    const forModel = (setting as Record<string, unknown>)[publicModel];
    return !(forModel === false || forModel === 'drop');
  }
  return true;
}

/** The caller-neutral name of a hosted tool, as the response header and the usage row name it. */
export function hostedToolName(tool: HostedTool): string {
  switch (tool.kind) {
    case 'web-search':
      return 'web_search';
    default: {
      const unknown: never = tool.kind;
      throw new Error(`unknown hosted tool ${String(unknown)}`);
    }
  }
}

/** Leaves a hosted tool out of the upstream request, noting it in `droppedHostedTools` and the warnings. */
export function dropHostedTool(request: ChatRequest, tool: HostedTool, reason: string): void {
  const name = hostedToolName(tool);
  const dropped = request.droppedHostedTools ?? [];
  if (!dropped.includes(name)) dropped.push(name);
  request.droppedHostedTools = dropped;
  const warning = `The hosted tool '${name}' was left out: ${reason}`;
  if (!request.warnings.includes(warning)) request.warnings.push(warning);
}
