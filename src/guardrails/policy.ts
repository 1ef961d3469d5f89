/**
 * Policy evaluation: the operator's guardrails, compiled once, applied to a request's input or an answer's output.
 * The result is an action (pass, the masked text, or a block naming the policy) and a summary of policy names,
 * outcomes and counts — never the text — for the `x-gateway-guardrails` header and the usage row.
 * Moderation and webhook policies call out of the gateway; they are returned in `external` for the caller to run.
 */
import { BUILT_IN_DETECTORS, detect, PII_KINDS, type Detector, type Span } from './detectors.js';
import { denyListDetector } from './deny-list.js';
import { scoreInjection } from './injection.js';
import { applyMask, type MaskVault } from './masking.js';
import type { DenyListSettings, GuardrailDirection, GuardrailPolicy, PiiSettings } from './settings.js';
import { StreamScanner } from './stream-scanner.js';
import { StreamTally } from './stream-tally.js';
import type { GuardrailHit, GuardrailOutcome } from './guardrail-hit.js';

export type { GuardrailHit, GuardrailOutcome } from './guardrail-hit.js';

export interface GuardrailSubject {
  text: string;
  /** names of the tools the request offers (input only) */
  toolNames?: readonly string[];
  /** results of tool calls: carried in the request (input), or an MCP tool's answer (output); scored for prompt injection */
  toolResults?: readonly string[];
}

export interface GuardrailVerdict {
  action: 'pass' | 'mask' | 'block';
  /** the text to send on: masked when a masking policy found something */
  text: string;
  blockedBy?: string;
  summary: GuardrailHit[];
  /** moderation and webhook policies that apply here, for the caller to run */
  external: GuardrailPolicy[];
}

interface CompiledPolicy {
  policy: GuardrailPolicy;
  detectors: Detector[];
  reversible: boolean;
  limits?: DenyListSettings;
}

function appliesTo(policy: GuardrailPolicy, direction: GuardrailDirection): boolean {
  return policy.applies_to === 'both' || policy.applies_to === direction;
}

function compile(policy: GuardrailPolicy): CompiledPolicy {
  if (policy.kind === 'pii') {
    const settings: PiiSettings = policy.settings ?? {};
    const kinds = settings.detectors ?? PII_KINDS;
    return { policy, detectors: kinds.map((k) => BUILT_IN_DETECTORS[k]), reversible: settings.reversible === true };
  }
  if (policy.kind === 'deny_list') {
    const settings: DenyListSettings = policy.settings ?? {};
    const hasList = (settings.words?.length ?? 0) > 0 || (settings.patterns?.length ?? 0) > 0;
    const detectors = hasList
      ? [denyListDetector({ words: settings.words, patterns: settings.patterns, maxMatchChars: settings.max_match_chars })]
      : [];
    return { policy, detectors, reversible: false, limits: settings };
  }
  return { policy, detectors: [], reversible: false };
}

function countKinds(spans: readonly Span[]): Record<string, number> {
  const found: Record<string, number> = {};
  for (const span of spans) found[span.kind] = (found[span.kind] ?? 0) + 1;
  return found;
}

/** Limits a deny-list policy carries besides its lists: prompt size, tool names, injection in tool results. */
function limitFindings(settings: DenyListSettings | undefined, subject: GuardrailSubject, direction: GuardrailDirection): Record<string, number> {
  const found: Record<string, number> = {};
  if (!settings) return found;
  // Tool results are scored wherever they are read: in a request, and as an MCP tool's answer on its way out.
  if (settings.tool_result_injection) {
    for (const result of subject.toolResults ?? []) {
      if (scoreInjection(result, settings.injection_threshold).flagged) found.injection = (found.injection ?? 0) + 1;
    }
  }
  if (direction !== 'input') return found;
  if (settings.max_prompt_chars !== undefined && subject.text.length > settings.max_prompt_chars) found.prompt_size = 1;
  const denied = new Set((settings.denied_tools ?? []).map((t) => t.toLowerCase()));
  for (const tool of subject.toolNames ?? []) {
    const tooLong = settings.max_tool_name_chars !== undefined && tool.length > settings.max_tool_name_chars;
    if (tooLong || denied.has(tool.toLowerCase())) found.tool_name = (found.tool_name ?? 0) + 1;
  }
  return found;
}

export class GuardrailSet {
  private readonly compiled: CompiledPolicy[];

  /** Policies must have been validated with guardrailInputSchema. */
  constructor(policies: readonly GuardrailPolicy[]) {
    this.compiled = policies.map(compile);
  }

  /**
   * Applies the policies for one direction, in order. Masking policies mask the text the next policy sees; the
   * first blocking policy that finds something stops the evaluation. `vault` is the request's own: reversible
   * masking writes placeholders into it (input), and the answer is restored from it.
   */
  evaluate(direction: GuardrailDirection, subject: GuardrailSubject, vault?: MaskVault): GuardrailVerdict {
    let text = subject.text;
    let action: GuardrailVerdict['action'] = 'pass';
    const summary: GuardrailHit[] = [];
    const external: GuardrailPolicy[] = [];
    for (const entry of this.compiled) {
      const { policy } = entry;
      if (!appliesTo(policy, direction)) continue;
      if (policy.kind === 'moderation' || policy.kind === 'webhook') {
        external.push(policy);
        continue;
      }
      const spans = entry.detectors.length > 0 ? detect(text, entry.detectors) : [];
      const limits = limitFindings(entry.limits, { ...subject, text }, direction);
      const found = { ...countKinds(spans), ...limits };
      const count = Object.values(found).reduce((a, b) => a + b, 0);
      let outcome: GuardrailOutcome = 'passed';
      if (count > 0) {
        if (policy.mode === 'block') outcome = 'blocked';
        else if (policy.mode === 'mask' && spans.length > 0) {
          text = applyMask(text, spans, entry.reversible && direction === 'input' ? vault : undefined);
          outcome = 'masked';
          action = 'mask';
        } else outcome = 'logged';
      }
      summary.push({ name: policy.name, kind: policy.kind, mode: policy.mode, outcome, count, found });
      if (outcome === 'blocked') return { action: 'block', text: subject.text, blockedBy: policy.name, summary, external };
    }
    return { action, text, summary, external };
  }

  /** The output policies' counts over a streamed answer, kept block by block without keeping its text. */
  outputTally(): StreamTally {
    const policies = this.compiled.filter((c) => appliesTo(c.policy, 'output') && c.policy.kind !== 'moderation' && c.policy.kind !== 'webhook');
    return new StreamTally(policies.map((c) => ({ policy: c.policy, detectors: c.detectors })));
  }

  /**
   * A scanner for a streamed answer: the detectors of the output policies that mask or block. Masking policies'
   * spans are masked as they pass; a blocking policy's span is reported for the caller to end the stream.
   */
  outputScanner(): { scanner: StreamScanner; blocking: Set<string> } | undefined {
    const active = this.compiled.filter((c) => appliesTo(c.policy, 'output') && c.detectors.length > 0 && c.policy.mode !== 'log');
    if (active.length === 0) return undefined;
    const blocking = new Set(active.filter((c) => c.policy.mode === 'block').flatMap((c) => c.detectors.map((d) => d.kind)));
    const mask = active.some((c) => c.policy.mode === 'mask');
    return { scanner: new StreamScanner(active.flatMap((c) => c.detectors), mask), blocking };
  }
}

/** `name=outcome;count` per policy, comma-separated: what the `x-gateway-guardrails` header carries. */
export function formatGuardrailsHeader(summary: readonly GuardrailHit[]): string {
  return summary.map((hit) => `${hit.name}=${hit.outcome};${hit.count}`).join(', ');
}
