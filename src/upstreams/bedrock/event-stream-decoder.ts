import { crc32 } from 'node:zlib';

/** A header value of the AWS event stream encoding, by its wire type. */
export type EventStreamHeaderValue = boolean | number | bigint | string | Uint8Array | Date;

export interface EventStreamMessage {
  headers: Record<string, EventStreamHeaderValue>;
  payload: Buffer;
}

/** A frame that breaks the encoding: a bad checksum or length. The stream cannot be trusted past it. */
export class EventStreamError extends Error {
  override name = 'EventStreamError';
}

const PRELUDE_BYTES = 8;
const PRELUDE_CRC_BYTES = 4;
const MESSAGE_CRC_BYTES = 4;
const MINIMUM_MESSAGE_BYTES = PRELUDE_BYTES + PRELUDE_CRC_BYTES + MESSAGE_CRC_BYTES;
/** The largest message the encoding allows (16 MiB, headers at most 128 KiB). */
const MAXIMUM_MESSAGE_BYTES = 16 * 1024 * 1024;
const MAXIMUM_HEADERS_BYTES = 128 * 1024;

function readHeaders(bytes: Buffer): Record<string, EventStreamHeaderValue> {
  // No prototype: a header named `__proto__` is a header like any other.
  const headers = Object.create(null) as Record<string, EventStreamHeaderValue>;
  let offset = 0;
  const need = (count: number): void => {
    if (offset + count > bytes.length) throw new EventStreamError('An event stream header runs past its section.');
  };
  while (offset < bytes.length) {
    need(1);
    const nameLength = bytes.readUInt8(offset);
    offset += 1;
    need(nameLength + 1);
    const name = bytes.toString('utf8', offset, offset + nameLength);
    offset += nameLength;
    const type = bytes.readUInt8(offset);
    offset += 1;
    let value: EventStreamHeaderValue;
    switch (type) {
      case 0:
        value = true;
        break;
      case 1:
        value = false;
        break;
      case 2:
        need(1);
        value = bytes.readInt8(offset);
        offset += 1;
        break;
      case 3:
        need(2);
        value = bytes.readInt16BE(offset);
        offset += 2;
        break;
      case 4:
        need(4);
        value = bytes.readInt32BE(offset);
        offset += 4;
        break;
      case 5:
        need(8);
        value = bytes.readBigInt64BE(offset);
        offset += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = bytes.readUInt16BE(offset);
        offset += 2;
        need(length);
        value = type === 6 ? new Uint8Array(bytes.subarray(offset, offset + length)) : bytes.toString('utf8', offset, offset + length);
        offset += length;
        break;
      }
      case 8:
        need(8);
        value = new Date(Number(bytes.readBigInt64BE(offset)));
        offset += 8;
        break;
      case 9:
        need(16);
        value = bytes.toString('hex', offset, offset + 16).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
        offset += 16;
        break;
      default:
        throw new EventStreamError(`Unknown event stream header type ${type}.`);
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * AWS's binary event stream framing (`application/vnd.amazon.eventstream`), fed in chunks of any size: each
 * message is a prelude (total length, headers length, CRC32 of both), headers, payload and a CRC32 of all before
 * it. Both checksums are verified; a mismatch throws EventStreamError.
 */
export class EventStreamDecoder {
  #buffered: Buffer[] = [];
  #size = 0;

  /** The messages completed by `chunk`. */
  push(chunk: Buffer): EventStreamMessage[] {
    if (chunk.length === 0) return [];
    this.#buffered.push(chunk);
    this.#size += chunk.length;
    const messages: EventStreamMessage[] = [];
    let buffer = this.#buffered.length === 1 ? (this.#buffered[0] as Buffer) : Buffer.concat(this.#buffered, this.#size);
    let offset = 0;
    while (buffer.length - offset >= PRELUDE_BYTES + PRELUDE_CRC_BYTES) {
      const totalLength = buffer.readUInt32BE(offset);
      const headersLength = buffer.readUInt32BE(offset + 4);
      if (crc32(buffer.subarray(offset, offset + PRELUDE_BYTES)) !== buffer.readUInt32BE(offset + PRELUDE_BYTES)) {
        throw new EventStreamError('An event stream prelude failed its checksum.');
      }
      if (totalLength < MINIMUM_MESSAGE_BYTES || totalLength > MAXIMUM_MESSAGE_BYTES || headersLength > MAXIMUM_HEADERS_BYTES || headersLength > totalLength - MINIMUM_MESSAGE_BYTES) {
        throw new EventStreamError('An event stream message has an impossible length.');
      }
      if (buffer.length - offset < totalLength) break;
      const message = buffer.subarray(offset, offset + totalLength);
      if (crc32(message.subarray(0, totalLength - MESSAGE_CRC_BYTES)) !== message.readUInt32BE(totalLength - MESSAGE_CRC_BYTES)) {
        throw new EventStreamError('An event stream message failed its checksum.');
      }
      const headersStart = PRELUDE_BYTES + PRELUDE_CRC_BYTES;
      messages.push({
        headers: readHeaders(message.subarray(headersStart, headersStart + headersLength)),
        payload: Buffer.from(message.subarray(headersStart + headersLength, totalLength - MESSAGE_CRC_BYTES)),
      });
      offset += totalLength;
    }
    buffer = buffer.subarray(offset);
    this.#buffered = buffer.length === 0 ? [] : [buffer];
    this.#size = buffer.length;
    return messages;
  }

  /** Bytes of an unfinished message still held (non-zero at the end of the body: the stream was cut). */
  get pending(): number {
    return this.#size;
  }
}
