/**
 * Calls of tools the upstream runs itself and bills per call, as the upstream reported them: web searches
 * (Anthropic's `server_tool_use.web_search_requests`, OpenAI's `web_search_call` items that searched, the distinct
 * non-empty queries of Gemini's grounding, one for each answer of an OpenAI chat search model), web fetches
 * (Anthropic's `web_fetch_requests`) and file searches (OpenAI's `file_search_call` items).
 */
export interface HostedToolCalls {
  webSearch: number;
  webFetch: number;
  fileSearch: number;
}

/** Token usage in one shape for every protocol. Counts are integers; absent details are 0. */
export interface Usage {
  input: {
    total: number;
    /** Input tokens billed at the full input price. */
    noCache: number;
    cacheRead: number;
    cacheWrite: number;
  };
  output: {
    total: number;
    text: number;
    reasoning: number;
  };
  /** Hosted tool calls of the answer; absent when it made none. */
  hostedTools?: HostedToolCalls;
  /** The audio tokens among the counts above (realtime sessions), billed at the audio prices; absent: none. */
  audio?: AudioTokens;
}

/** Audio tokens of an answer: part of its input and output counts, not added to them. */
export interface AudioTokens {
  /** Audio input tokens, cached ones included. */
  input: number;
  /** Of `input`, those read from the cache. */
  cacheRead: number;
  output: number;
}

export function emptyUsage(): Usage {
  return { input: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
}

export function totalTokens(usage: Usage): number {
  return usage.input.total + usage.output.total;
}

export const NO_HOSTED_TOOL_CALLS: HostedToolCalls = { webSearch: 0, webFetch: 0, fileSearch: 0 };

/** Whether any hosted tool was called. */
export function madeHostedToolCalls(calls: HostedToolCalls | undefined): calls is HostedToolCalls {
  return calls !== undefined && calls.webSearch + calls.webFetch + calls.fileSearch > 0;
}

/** `usage` with the hosted tool calls set (left out when there were none). */
export function withHostedTools(usage: Usage, calls: HostedToolCalls | undefined): Usage {
  if (!madeHostedToolCalls(calls)) {
    if (usage.hostedTools === undefined) return usage;
    const { hostedTools: _dropped, ...tokens } = usage;
    return tokens;
  }
  return { ...usage, hostedTools: calls };
}
