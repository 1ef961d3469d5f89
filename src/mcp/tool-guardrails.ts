/**
 * The caller's guardrails on what MCP servers send into a conversation: a tool's description is input-side text (it
 * is read by the model as part of its prompt), a tool's result is output (the server's answer to the caller), scored
 * besides for prompt injection where a policy asks for it (`tool_result_injection`). The built-in policies (pii,
 * deny_list) run here, masking, blocking or logging by their mode; what ran is kept as names, outcomes and counts,
 * never text. External policies (webhook, moderation) are not called per tool: on the model paths they see a
 * tool's result once it is part of the next model request, as every request's input.
 */
import type { CallToolResult, GetPromptResult, ReadResourceResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ApiKey } from '../domain/records.js';
import type { GuardrailUsage } from '../domain/usage-records.js';
import type { ResolvedGuardrails } from '../guardrail-policies/guardrail-book.js';
import type { GuardrailHit, GuardrailOutcome } from '../guardrails/policy.js';
import type { GatewayServices } from '../services.js';

/** Joins several texts for one evaluation; no detector matches it, so a masked text splits back apart. */
const SEPARATOR = '\u0000\n';

/** How bad an outcome is, to merge several evaluations of one policy into one entry. */
const SEVERITY: Record<GuardrailOutcome, number> = { passed: 0, unavailable: 1, logged: 2, masked: 3, blocked: 4 };

/**
 * The guardrails of a caller of MCP tools: its account's, project's and key's, and its model's on the model paths (a
 * binding to a model never applies to `/mcp`, which has none). Null when no policy applies.
 */
export async function toolGuardrails(services: GatewayServices, key: Pick<ApiKey, 'id' | 'accountId' | 'projectId'>, model: string | null): Promise<ResolvedGuardrails | null> {
  // No model is registered with an empty id, so no model binding matches a call without one.
  return services.guardrails.forRequest(model ?? '', { accountId: key.accountId, projectId: key.projectId ?? null, keyId: key.id });
}

/** A tool a guardrail left out of a listing, and the policy that did. */
export interface BlockedTool {
  tool: string;
  policy: string;
}

/** A listing's tools after the input policies: descriptions masked where a policy masks, blocked tools left out. */
export interface CheckedTools {
  tools: Tool[];
  blocked: BlockedTool[];
  /** One entry per policy that ran, merged over the tools. */
  usage: GuardrailUsage[];
}

/** A tool result after the output policies: masked in place, or the policy that blocked it. */
export type CheckedResult = CheckedOutput<CallToolResult>;

/** A text of a result a policy may mask, and where it goes back. */
interface Slot {
  text: string;
  put: (text: string) => void;
}

function appliesTo(resolved: ResolvedGuardrails, direction: 'input' | 'output'): boolean {
  return resolved.policies.some((policy) => policy.kind !== 'webhook' && policy.kind !== 'moderation' && (policy.applies_to === 'both' || policy.applies_to === direction));
}

/** Whether any built-in policy reads tool descriptions (so a call needs its tool's description to be checked). */
export function checksDescriptions(resolved: ResolvedGuardrails | null): resolved is ResolvedGuardrails {
  return resolved !== null && appliesTo(resolved, 'input');
}

function usageOf(direction: 'input' | 'output', hits: readonly GuardrailHit[]): GuardrailUsage[] {
  return hits.map((hit) => ({ name: hit.name, direction, outcome: hit.outcome, count: hit.count }));
}

/** Several evaluations' entries as one per policy and direction: counts added, the worst outcome kept. */
export function mergeUsage(entries: readonly GuardrailUsage[]): GuardrailUsage[] {
  const merged = new Map<string, GuardrailUsage>();
  for (const entry of entries) {
    const key = `${entry.direction}\u0000${entry.name}`;
    const seen = merged.get(key);
    if (seen === undefined) merged.set(key, { ...entry });
    else {
      seen.count += entry.count;
      if (SEVERITY[entry.outcome] > SEVERITY[seen.outcome]) seen.outcome = entry.outcome;
    }
  }
  return [...merged.values()];
}

/** What a tool's description check reads: its description (and title), with its name for deny-listed tool names. */
function descriptionText(tool: Tool): string {
  return [tool.title ?? '', tool.description ?? ''].filter((text) => text !== '').join(SEPARATOR);
}

/** One tool's description through the input policies: the tool as it may be listed, or the policy that blocks it. */
export function checkTool(resolved: ResolvedGuardrails, tool: Tool): { tool: Tool | null; blockedBy: string | null; usage: GuardrailUsage[] } {
  const verdict = resolved.set.evaluate('input', { text: descriptionText(tool), toolNames: [tool.name] });
  const usage = usageOf('input', verdict.summary);
  if (verdict.action === 'block') return { tool: null, blockedBy: verdict.blockedBy ?? '', usage };
  if (verdict.action !== 'mask') return { tool, blockedBy: null, usage };
  const masked: Tool = { ...tool };
  const slots: Slot[] = [];
  if (tool.title !== undefined && tool.title !== '') slots.push({ text: tool.title, put: (text) => { masked.title = text; } });
  if (tool.description !== undefined && tool.description !== '') slots.push({ text: tool.description, put: (text) => { masked.description = text; } });
  writeBack(slots, verdict.text, (text) => resolved.set.evaluate('input', { text }).text);
  return { tool: masked, blockedBy: null, usage };
}

/** A listing's tools through the input policies, each on its own (one tool's block leaves the others listed). */
export function checkTools(resolved: ResolvedGuardrails | null, tools: readonly Tool[], serverName: string): CheckedTools {
  if (!checksDescriptions(resolved)) return { tools: [...tools], blocked: [], usage: [] };
  const kept: Tool[] = [];
  const blocked: BlockedTool[] = [];
  const usage: GuardrailUsage[] = [];
  for (const tool of tools) {
    const checked = checkTool(resolved, tool);
    usage.push(...checked.usage);
    if (checked.tool === null) blocked.push({ tool: `${serverName}__${tool.name}`, policy: checked.blockedBy ?? '' });
    else kept.push(checked.tool);
  }
  return { tools: kept, blocked, usage: mergeUsage(usage) };
}

/** The texts of a result: its text parts, embedded resources' text, and the string values of its structured content. */
function resultSlots(result: CallToolResult): Slot[] {
  const slots: Slot[] = [];
  for (const part of result.content) {
    if (part.type === 'text') slots.push({ text: part.text, put: (text) => { part.text = text; } });
    else if (part.type === 'resource' && 'text' in part.resource && typeof part.resource.text === 'string') {
      const resource = part.resource as { text: string };
      slots.push({ text: resource.text, put: (text) => { resource.text = text; } });
    }
  }
  const visit = (holder: Record<string, unknown> | unknown[], key: string | number): void => {
    const value = (holder as Record<string | number, unknown>)[key];
    if (typeof value === 'string') slots.push({ text: value, put: (text) => { (holder as Record<string | number, unknown>)[key] = text; } });
    else if (Array.isArray(value)) value.forEach((_item, index) => visit(value, index));
    else if (value !== null && typeof value === 'object') for (const inner of Object.keys(value)) visit(value as Record<string, unknown>, inner);
  };
  if (result.structuredContent !== undefined) for (const key of Object.keys(result.structuredContent)) visit(result.structuredContent, key);
  return slots;
}

/**
 * A tool's result through the output policies (and the injection heuristic of the policies that score tool results),
 * masked in place on a copy; blocked names the policy. A result no policy reads is passed as it came.
 */
export function checkResult(resolved: ResolvedGuardrails | null, original: CallToolResult): CheckedResult {
  return checkOutput(resolved, original, resultSlots);
}

/** A result a server sends besides a tool's (a prompt, a resource's contents), through the output policies. */
export interface CheckedOutput<T> {
  result: T;
  blockedBy: string | null;
  usage: GuardrailUsage[];
}

/** A text part of a message or tool result, or an embedded resource's text, as a slot. */
function contentSlot(part: { type: string }, slots: Slot[]): void {
  if (part.type === 'text' && typeof (part as { text?: unknown }).text === 'string') {
    const text = part as unknown as { text: string };
    slots.push({ text: text.text, put: (masked) => { text.text = masked; } });
  } else if (part.type === 'resource') {
    const resource = (part as { resource?: { text?: unknown } }).resource;
    if (resource !== undefined && typeof resource.text === 'string') {
      const holder = resource as { text: string };
      slots.push({ text: holder.text, put: (masked) => { holder.text = masked; } });
    }
  }
}

/** A prompt's messages through the output policies, as a tool's result: its texts are what the server sends. */
export function checkPromptResult(resolved: ResolvedGuardrails | null, original: GetPromptResult): CheckedOutput<GetPromptResult> {
  return checkOutput(resolved, original, (result) => {
    const slots: Slot[] = [];
    for (const message of result.messages) contentSlot(message.content, slots);
    return slots;
  });
}

/** A resource's contents through the output policies: its text contents (binary `blob` contents are not read). */
export function checkResourceResult(resolved: ResolvedGuardrails | null, original: ReadResourceResult): CheckedOutput<ReadResourceResult> {
  return checkOutput(resolved, original, (result) => {
    const slots: Slot[] = [];
    for (const content of result.contents) {
      if ('text' in content && typeof content.text === 'string') {
        const holder = content as { text: string };
        slots.push({ text: holder.text, put: (masked) => { holder.text = masked; } });
      }
    }
    return slots;
  });
}

/** Texts of a server's answer through the output policies: masked in place on a copy, or the blocking policy. */
function checkOutput<T>(resolved: ResolvedGuardrails | null, original: T, slotsOf: (copy: T) => Slot[]): CheckedOutput<T> {
  if (resolved === null || !appliesTo(resolved, 'output')) return { result: original, blockedBy: null, usage: [] };
  const result = structuredClone(original);
  const slots = slotsOf(result);
  const texts = slots.map((slot) => slot.text);
  const verdict = resolved.set.evaluate('output', { text: texts.join(SEPARATOR), toolResults: texts.length === 0 ? [] : [texts.join('\n')] });
  const usage = usageOf('output', verdict.summary);
  if (verdict.action === 'block') return { result: original, blockedBy: verdict.blockedBy ?? '', usage };
  if (verdict.action === 'mask') writeBack(slots, verdict.text, (text) => resolved.set.evaluate('output', { text }).text);
  return { result: verdict.action === 'mask' ? result : original, blockedBy: null, usage };
}

/** Puts a masked joined text back into its slots; when a mask swallowed a separator, masks each slot on its own. */
function writeBack(slots: readonly Slot[], masked: string, maskOne: (text: string) => string): void {
  const pieces = masked.split(SEPARATOR);
  if (pieces.length === slots.length) {
    slots.forEach((slot, index) => slot.put(pieces[index] as string));
    return;
  }
  for (const slot of slots) slot.put(maskOne(slot.text));
}

/** The `x-gateway-guardrails` value of a listing or call: `name/direction=outcome;count` per policy that ran. */
export function guardrailsHeader(usage: readonly GuardrailUsage[]): Record<string, string> {
  return usage.length === 0 ? {} : { 'x-gateway-guardrails': usage.map((entry) => `${entry.name}/${entry.direction}=${entry.outcome};${entry.count}`).join(', ') };
}
