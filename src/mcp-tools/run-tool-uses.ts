import type { GatewayServices } from '../services.js';
import { MAX_CALLS_PER_ROUND } from './model-rounds.js';
import { runToolForModel, type ToolOutcome, type ToolRunCaller } from './mcp-tool-runs.js';
import type { OfferedTool } from './offered-servers.js';

/** A call the model made of an offered tool: its arguments as the model wrote them. */
export interface ToolUse {
  offered: OfferedTool;
  arguments: unknown;
}

const INVALID_PARAMS = -32602;

/**
 * Runs a turn's calls at once, each on its server, their outcomes in the calls' order. Arguments that are not a
 * JSON object, and calls past the turn's bound, are answered with an error without reaching the server.
 */
export function runToolUses(services: GatewayServices, caller: ToolRunCaller, uses: readonly ToolUse[]): Promise<ToolOutcome[]> {
  return Promise.all(uses.map(async (use, index): Promise<ToolOutcome> => {
    if (index >= MAX_CALLS_PER_ROUND) return { kind: 'protocol_error', code: INVALID_PARAMS, message: `At most ${MAX_CALLS_PER_ROUND} tool calls are run of one turn.` };
    const args = use.arguments ?? {};
    if (typeof args !== 'object' || Array.isArray(args)) return { kind: 'protocol_error', code: INVALID_PARAMS, message: 'The tool arguments must be a JSON object.' };
    const { offered, tool } = use.offered;
    return runToolForModel(services, caller, offered.server, tool.name, args as Record<string, unknown>, offered.requested.headers);
  }));
}

/** Arguments a model wrote as JSON text, parsed; text that is not JSON stays text (and is refused as arguments). */
export function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
