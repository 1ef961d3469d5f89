import type { HostedToolCalls } from '../ir/usage.js';
import type { NanoUsd } from './records.js';

// What a request leaves behind: its charge, its usage row (metadata only) and the queries that read the rows back.

/** One request's charge, settled in a batch with others. */
export interface UsageCharge {
  entryId: string;
  accountId: string;
  keyId: string;
  requestId: string;
  /** Positive amount to take from the balance. */
  costNano: NanoUsd;
  createdAt: number;
}

/** Metadata only: no prompt, completion or tool-argument text, ever. */
export interface UsageLogRow {
  requestId: string;
  accountId: string | null;
  keyId: string | null;
  model: string | null;
  channelId: string | null;
  protocol: string;
  endpoint: string;
  stream: boolean;
  status: number;
  errorCode: string | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  costNano: NanoUsd;
  latencyMs: number;
  ttfbMs: number | null;
  attempts: number;
  createdAt: number;
  /** The channels tried, in order (the last one is `channelId`); absent on rows older than the column. */
  attemptedChannels?: string[];
  /** Answered from the response cache (no upstream call); absent on rows older than the column. */
  cacheHit?: boolean;
  /** Calls of hosted tools the upstream bills per call; absent when none (and on rows older than the columns). */
  hostedTools?: HostedToolCalls;
  /** What those calls cost, part of `costNano`; absent when nothing. */
  hostedToolCostNano?: NanoUsd;
  /** The end customer the request named (bounded, see customers/request-identity.ts); absent or null: none. */
  customer?: string | null;
  /** The request's tags, `name: value` (bounded in count and length); absent or null: none. */
  tags?: Readonly<Record<string, string>> | null;
  /** What the request's guardrail policies did (names, outcomes, counts; never text); absent: none ran. */
  guardrails?: readonly GuardrailUsage[];
  /** An MCP tool call's facts (never its arguments or result, unless its server logs payloads); absent: not one. */
  mcp?: McpCallUsage;
}

/** What the usage row of one MCP tool call keeps. */
export interface McpCallUsage {
  server: string;
  tool: string;
  /** Bytes of the call's arguments as sent upstream, and of its result as returned (JSON text). */
  bytesIn: number;
  bytesOut: number;
  /** `{ arguments, result }` as JSON text (bounded), only for a server whose operator opted in to log payloads. */
  payload?: string;
}

/** One guardrail policy's part in a request, as its usage row keeps it. */
export interface GuardrailUsage {
  name: string;
  direction: 'input' | 'output';
  /** `unavailable`: an external guardrail gave no verdict and its policy fails open */
  outcome: 'passed' | 'logged' | 'masked' | 'blocked' | 'unavailable';
  count: number;
}

export interface UsageQuery {
  accountId?: string;
  keyId?: string;
  /** Any of these keys (an empty list matches nothing). */
  keyIds?: readonly string[];
  /** The channel that answered. */
  channelId?: string;
  model?: string;
  /** The end customer the requests named. */
  customer?: string;
  status?: number;
  /** A realtime session's rows: the session's own (its id) and its responses' (`<id>.<n>`). */
  sessionId?: string;
  from?: number;
  to?: number;
}
