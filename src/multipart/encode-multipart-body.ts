import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';

export type MultipartPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; contentType: string; path: string; size: number };

/** A multipart body rebuilt for an upstream: its exact length, and a fresh stream of it for each attempt. */
export interface MultipartBody {
  contentType: string;
  length: number;
  open(): AsyncIterable<Buffer>;
}

/** Quotes in header parameters as browsers do (WHATWG: `"` → %22, CR → %0D, LF → %0A). */
function quoted(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function partHead(boundary: string, part: MultipartPart): Buffer {
  const disposition = part.kind === 'file'
    ? `form-data; name="${quoted(part.name)}"; filename="${quoted(part.filename)}"`
    : `form-data; name="${quoted(part.name)}"`;
  const type = part.kind === 'file' ? `\r\nContent-Type: ${part.contentType.replace(/[\r\n]/g, '')}` : '';
  return Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`, 'utf8');
}

const CRLF = Buffer.from('\r\n');
const READ_CHUNK_BYTES = 64 * 1024;
/**
 * Read buffers reused in rotation. The transport takes one chunk at a time and, whenever the socket leaves a write
 * queued, waits for it to drain before taking the next (a Readable holds at most one chunk ahead), so a buffer is
 * written out long before it comes round again. Reusing them keeps a 25 MB upload from leaving 25 MB of dead
 * buffers for the garbage collector.
 */
const READ_RING_SIZE = 8;

/** The file's bytes in chunks read into a small ring of reused buffers. */
async function* readFileChunks(path: string): AsyncIterable<Buffer> {
  const handle = await open(path, 'r');
  try {
    const ring = Array.from({ length: READ_RING_SIZE }, () => Buffer.allocUnsafe(READ_CHUNK_BYTES));
    for (let turn = 0; ; turn += 1) {
      const buffer = ring[turn % READ_RING_SIZE] as Buffer;
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * A multipart/form-data body from fields and spooled files. Files are read from disk in 64 KiB chunks each time
 * the body is opened (into reused buffers), so a retry on another channel sends the same bytes again without anything held in memory.
 */
export function encodeMultipartBody(parts: readonly MultipartPart[]): MultipartBody {
  const boundary = `----unigate${randomBytes(16).toString('hex')}`;
  const heads = parts.map((part) => partHead(boundary, part));
  const values = parts.map((part) => (part.kind === 'field' ? Buffer.from(part.value, 'utf8') : null));
  const tail = Buffer.from(`--${boundary}--\r\n`);
  let length = tail.length;
  parts.forEach((part, index) => {
    length += (heads[index] as Buffer).length + CRLF.length + (part.kind === 'file' ? part.size : (values[index] as Buffer).length);
  });
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    async *open(): AsyncIterable<Buffer> {
      for (let index = 0; index < parts.length; index += 1) {
        const part = parts[index] as MultipartPart;
        yield heads[index] as Buffer;
        if (part.kind === 'file') {
          yield* readFileChunks(part.path);
        } else {
          yield values[index] as Buffer;
        }
        yield CRLF;
      }
      yield tail;
    },
  };
}
