/**
 * The open-loop generator's HTTP/1.1 response reader: just enough of the protocol to count answers on keep-alive
 * connections cheaply (status, body by Content-Length or chunked, whether the connection stays open). It is not a
 * general client: no 1xx handling, no HEAD, and a body without a length is read until the connection closes.
 */

const CRLF = 0x0d0a;
const HEADER_END = Buffer.from('\r\n\r\n');

export interface Http1Response {
  status: number;
  /** The body, decoded from chunked transfer coding when it came so. */
  body: Buffer;
  /** False when the server said `Connection: close` (or spoke HTTP/1.0 without keep-alive). */
  keepAlive: boolean;
}

/** Thrown on bytes that are not an HTTP/1.x response. */
export class Http1ParseError extends Error {
  override name = 'Http1ParseError';
}

interface Head {
  status: number;
  keepAlive: boolean;
  /** Where the body starts in the buffered bytes. */
  bodyStart: number;
  contentLength: number | null;
  chunked: boolean;
}

function parseHead(bytes: Buffer, headerEnd: number): Head {
  const text = bytes.toString('latin1', 0, headerEnd);
  if (!text.startsWith('HTTP/1.')) throw new Http1ParseError(`not an HTTP/1.x status line: ${JSON.stringify(text.slice(0, 40))}`);
  const status = Number(text.slice(9, 12));
  if (!Number.isInteger(status) || status < 100) throw new Http1ParseError(`bad status line: ${JSON.stringify(text.slice(0, 40))}`);
  let contentLength: number | null = null;
  let chunked = false;
  let keepAlive = text[7] === '1';
  for (const line of text.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim().toLowerCase();
    if (name === 'content-length') {
      if (!/^\d+$/.test(value)) throw new Http1ParseError(`bad content-length: ${value}`);
      contentLength = Number(value);
    } else if (name === 'transfer-encoding') chunked = value.split(',').map((v) => v.trim()).includes('chunked');
    else if (name === 'connection') {
      const tokens = value.split(',').map((v) => v.trim());
      if (tokens.includes('close')) keepAlive = false;
      else if (tokens.includes('keep-alive')) keepAlive = true;
    }
  }
  return { status, keepAlive, bodyStart: headerEnd + HEADER_END.length, contentLength: chunked ? null : contentLength, chunked };
}

/**
 * Decodes a chunked body starting at `from`: the decoded body and where the message ends, or null while incomplete.
 * Trailer fields are skipped.
 */
function decodeChunked(bytes: Buffer, from: number): { body: Buffer; end: number } | null {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return null;
    const sizeText = bytes.toString('latin1', at, lineEnd).split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) throw new Http1ParseError(`bad chunk size: ${JSON.stringify(sizeText)}`);
    const size = parseInt(sizeText, 16);
    at = lineEnd + 2;
    if (size === 0) {
      // Trailers, then an empty line.
      for (;;) {
        const trailerEnd = bytes.indexOf('\r\n', at, 'latin1');
        if (trailerEnd < 0) return null;
        const empty = trailerEnd === at;
        at = trailerEnd + 2;
        if (empty) return { body: parts.length === 1 ? parts[0]! : Buffer.concat(parts), end: at };
      }
    }
    if (bytes.length < at + size + 2) return null;
    if (bytes.readUInt16BE(at + size) !== CRLF) throw new Http1ParseError('chunk not followed by CRLF');
    parts.push(bytes.subarray(at, at + size));
    at += size + 2;
  }
}

/**
 * Reads responses from one connection's bytes, in order. `push` hands each complete response to the callback
 * given at construction; bytes of an incomplete one wait for the next push (or for `end` when the body runs to
 * the connection's close).
 */
export class Http1ResponseReader {
  readonly #onResponse: (response: Http1Response) => void;
  #buffered: Buffer | null = null;

  constructor(onResponse: (response: Http1Response) => void) {
    this.#onResponse = onResponse;
  }

  /** True while part of a response has arrived. */
  get midResponse(): boolean {
    return this.#buffered !== null && this.#buffered.length > 0;
  }

  push(chunk: Buffer): void {
    let bytes = this.#buffered === null ? chunk : Buffer.concat([this.#buffered, chunk]);
    this.#buffered = null;
    while (bytes.length > 0) {
      const headerEnd = bytes.indexOf(HEADER_END);
      if (headerEnd < 0) break;
      const head = parseHead(bytes, headerEnd);
      let body: Buffer;
      let end: number;
      if (head.chunked) {
        const decoded = decodeChunked(bytes, head.bodyStart);
        if (decoded === null) break;
        ({ body, end } = decoded);
      } else if (head.contentLength !== null) {
        end = head.bodyStart + head.contentLength;
        if (bytes.length < end) break;
        body = bytes.subarray(head.bodyStart, end);
      } else if (head.status === 204 || head.status === 304) {
        end = head.bodyStart;
        body = Buffer.alloc(0);
      } else {
        break; // read until close
      }
      this.#onResponse({ status: head.status, body, keepAlive: head.keepAlive });
      bytes = bytes.subarray(end);
    }
    if (bytes.length > 0) this.#buffered = bytes;
  }

  /** The connection closed: a response whose body runs to the close is complete now. True when one was. */
  end(): boolean {
    const bytes = this.#buffered;
    this.#buffered = null;
    if (bytes === null) return false;
    const headerEnd = bytes.indexOf(HEADER_END);
    if (headerEnd < 0) return false;
    const head = parseHead(bytes, headerEnd);
    if (head.chunked || head.contentLength !== null) return false;
    this.#onResponse({ status: head.status, body: bytes.subarray(head.bodyStart), keepAlive: false });
    return true;
  }
}
