import type { ToolDefinition } from '../ir/chat-request.js';
import { topLevelIndex } from './top-level-index.js';

/**
 * The caller's own bytes of the `tools` member a decoded request's tool list came from, so a translator can reuse
 * what it made of the same bytes before (`ToolListCache`) instead of walking and writing the same twelve schemas on
 * every turn of an agent's loop. The source stays bound to the list it was decoded into: a list replaced, grown,
 * shrunk, or whose tools were replaced or given another name, description, strictness or schema object no longer
 * has a source, and is translated afresh.
 */
export interface ToolsSource {
  /** The bytes of the caller's `tools` member. */
  readonly bytes: Buffer;
  /** The protocol whose decoder read them: the same bytes may decode to other tools under another protocol. */
  readonly protocol: string;
  /**
   * Whose request the bytes came from (the account): what was made of them serves that caller's requests only, so
   * how fast a list is translated never tells one account what another sent.
   */
  readonly scope: string;
}

interface BoundSource extends ToolsSource {
  /** Each tool and what it held when the list was decoded. */
  readonly tools: readonly ToolDefinition[];
  readonly fields: readonly (readonly [string, string | undefined, Record<string, unknown>, boolean | undefined])[];
}

const sources = new WeakMap<readonly ToolDefinition[], BoundSource>();

/**
 * Binds `tools`, just decoded by `protocol`'s decoder from the body `bytes` (the caller's whole JSON body, as
 * parsed) of a request of `scope` (its account), to the bytes of the body's top-level `tools` member. Nothing is bound when those bytes cannot be told for
 * sure (a name written twice, escapes in a name) or the list is empty.
 */
export function rememberToolsSource(tools: ToolDefinition[] | undefined, bytes: Buffer | null, protocol: string, scope: string): void {
  if (bytes === null || tools === undefined || tools.length === 0) return;
  const index = topLevelIndex(bytes);
  if (index.members === null || index.written !== index.members.size) return;
  const span = index.members.get('tools');
  if (span === undefined) return;
  // A list decoded once and shared (a kept tools value's) is bound already to the same bytes when it still holds them.
  const bound = sources.get(tools);
  if (bound !== undefined && bound.protocol === protocol && bound.scope === scope && stillHolds(bound, tools) && bytes.compare(bound.bytes, 0, bound.bytes.length, span.start, span.end) === 0) return;
  sources.set(tools, {
    bytes: bytes.subarray(span.start, span.end),
    protocol,
    scope,
    tools: [...tools],
    fields: tools.map((tool) => [tool.name, tool.description, tool.parameters, tool.strict] as const),
  });
}

/** What `tools` was decoded from, while the list still holds what was decoded; else undefined. */
export function toolsSourceOf(tools: readonly ToolDefinition[] | undefined): ToolsSource | undefined {
  if (tools === undefined) return undefined;
  const source = sources.get(tools);
  if (source === undefined || !stillHolds(source, tools)) return undefined;
  return { bytes: source.bytes, protocol: source.protocol, scope: source.scope };
}

/** Whether `tools` holds what it held when `source` was bound to it. */
function stillHolds(source: BoundSource, tools: readonly ToolDefinition[]): boolean {
  if (source.tools.length !== tools.length) return false;
  for (let index = 0; index < tools.length; index += 1) {
    const tool = tools[index] as ToolDefinition;
    // Read by index: destructuring the tuple would allocate an iterator per tool on every request.
    const held = source.fields[index] as BoundSource['fields'][number];
    if (tool !== source.tools[index] || tool.name !== held[0] || tool.description !== held[1] || tool.parameters !== held[2] || tool.strict !== held[3]) return false;
  }
  return true;
}

/** The cache variant of what a translator makes of `source`: its caller's scope and the protocol that decoded it. */
export function sourceVariant(source: ToolsSource): string {
  return `${source.scope} ${source.protocol}`;
}
