import { withFields } from '../shared/with-fields.js';
import { GATEWAY_STATE_MARKER } from './gateway-state.js';
import { QUOTE } from './json-bytes.js';
import { namesWrittenOnce, soleStringMemberSpan, topLevelStringMember, type JsonSpan } from './json-top-level.js';
import { indexedNamesWrittenOnce, topLevelIndex, type TopLevelIndex } from './top-level-index.js';
import { includesPastKept } from './search-past-kept.js';
import type { ClientWire } from './wire.js';

/** The caller's body with `model` set to the upstream model, as JSON text. */
export function bodyNamingModel(body: Record<string, unknown>, upstreamModel: string): string {
  return JSON.stringify(withFields(body, { model: upstreamModel }));
}

/**
 * The caller's own bytes, to be sent as they came, when nothing in them needs a rewrite for this upstream: they are
 * still what the body object was parsed from (`bytes` is null once anything was taken out of it or added to it),
 * the body already names the upstream's model (`upstreamModel` null: the wire carries none in its body), and no
 * member name is written twice, so the upstream reads the same members the gateway routed and billed by. Null: the
 * body must be written again.
 */
export function untouchedBytes(body: Record<string, unknown>, bytes: Buffer | null, upstreamModel: string | null): Buffer | null {
  if (bytes === null) return null;
  if (upstreamModel !== null && body.model !== upstreamModel) return null;
  return writtenOnce(bytes, Object.keys(body)) ? bytes : null;
}

/**
 * Whether each of the parsed body's own keys is written once among the top-level members of its bytes: told by the
 * index of their top-level members read with the body (`topLevelIndex`), else by native searches over the bytes
 * (`namesWrittenOnce`) where that index could not be sure.
 */
function writtenOnce(bytes: Buffer, names: readonly string[]): boolean {
  const index = topLevelIndex(bytes);
  return index.members === null ? namesWrittenOnce(bytes, names) : indexedNamesWrittenOnce(index, names);
}

/**
 * The span of the string value of the top-level member `name` by the index of the body's top-level members, when
 * every name is written once; null when it is not, or the value is not a string.
 */
function indexedStringMember(bytes: Buffer, index: TopLevelIndex, names: readonly string[], name: string): JsonSpan | null {
  if (!indexedNamesWrittenOnce(index, names)) return null;
  const span = index.members?.get(name);
  return span === undefined || bytes[span.start] !== QUOTE ? null : span;
}

/**
 * Where the string value of the member `model` stands in bytes whose top-level members the index could not be sure
 * of, when no member name is written twice: found by native searches (`soleStringMemberSpan`), else by one walk over
 * the top-level members (`topLevelStringMember`, which tells whether a name is written twice too).
 */
function scannedModelSpan(bytes: Buffer, names: readonly string[]): JsonSpan | null {
  const span = soleStringMemberSpan(bytes, 'model');
  if (span !== null) return namesWrittenOnce(bytes, names) ? span : null;
  const members = topLevelStringMember(bytes, 'model');
  return members === null || members.names !== names.length ? null : members.span;
}

/**
 * The caller's own bytes naming the upstream's model: as they came when they already name it (`untouchedBytes`),
 * else with only the value of their `model` member replaced, when no member name is written twice and that member's
 * string value is found: by the index of the top-level members read with the body (`topLevelIndex`), else by a scan
 * (`scannedModelSpan`). Every other byte is the caller's, so the upstream reads what the gateway routed and billed by
 * without the body being written again. Null: the body must be written again.
 */
export function bytesNamingModel(body: Record<string, unknown>, bytes: Buffer | null, upstreamModel: string): Buffer | null {
  if (bytes === null) return null;
  if (body.model === upstreamModel) return untouchedBytes(body, bytes, upstreamModel);
  if (typeof body.model !== 'string') return null;
  const names = Object.keys(body);
  const index = topLevelIndex(bytes);
  const span = index.members === null ? scannedModelSpan(bytes, names) : indexedStringMember(bytes, index, names, 'model');
  if (span === null) return null;
  const model = JSON.stringify(upstreamModel);
  const modelBytes = Buffer.byteLength(model, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length - (span.end - span.start) + modelBytes);
  bytes.copy(out, 0, 0, span.start);
  out.write(model, span.start, 'utf8');
  bytes.copy(out, span.start + modelBytes, span.end);
  return out;
}

/**
 * Whether the bytes about to be sent (`out`: the caller's `bytes`, perhaps naming another model) may hold reasoning
 * state this gateway made: the marker in them, or spelt with `\u` escapes (the only way JSON text can spell its
 * letters otherwise), in which case the parsed body is asked. Kept values (an agent's tools) are searched once each
 * (`includesPastKept`).
 */
function mayHoldGatewayState(out: Buffer, bytes: Buffer, body: Record<string, unknown>, strip: (body: Record<string, unknown>) => Record<string, unknown>): boolean {
  if (includesPastKept(out, bytes, GATEWAY_STATE_MARKER)) return true;
  return includesPastKept(out, bytes, '\\u') && strip(body) !== body;
}

/**
 * The body with `model` set, without the reasoning state this gateway made for another provider: the caller's own
 * bytes (`bytesNamingModel`) when they hold no such state, else JSON text. Only a text holding the
 * gateway's marker (a scan of the bytes about to be sent) is read for such state; the rare body that holds some is
 * written again without it.
 */
export function bodyWithoutGatewayState(
  body: Record<string, unknown>,
  upstreamModel: string,
  strip: (body: Record<string, unknown>) => Record<string, unknown>,
  bytes: Buffer | null,
): string | Buffer {
  const callers = bytesNamingModel(body, bytes, upstreamModel);
  if (callers !== null && bytes !== null && !mayHoldGatewayState(callers, bytes, body, strip)) return callers;
  const text = bodyNamingModel(body, upstreamModel);
  if (!text.includes(GATEWAY_STATE_MARKER)) return text;
  const stripped = strip(body);
  return stripped === body ? text : bodyNamingModel(stripped, upstreamModel);
}

/**
 * A same-wire upstream's complete JSON answer naming `model` (the public id of the model that answered) in the wire's
 * own field for it, in place of the upstream's own name. An answer that is not a JSON object goes back as it came.
 */
export function answerNamingModel(wire: ClientWire, body: Buffer, model: string): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return body;
  return Buffer.from(JSON.stringify({ ...parsed, [wire.answerModelField]: model }), 'utf8');
}
