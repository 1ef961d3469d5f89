/**
 * AWS's binary event stream framing, written the way Bedrock writes it: prelude (total length, headers length,
 * CRC32), headers, payload, CRC32 of the whole message. String headers only (all Bedrock sends).
 */
import { crc32 } from 'node:zlib';

export function encodeEventStreamMessage(headers: Record<string, string>, payload: Buffer | string): Buffer {
  const headerParts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBytes = Buffer.from(name, 'utf8');
    const valueBytes = Buffer.from(value, 'utf8');
    const header = Buffer.alloc(1 + nameBytes.length + 1 + 2 + valueBytes.length);
    header.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(header, 1);
    header.writeUInt8(7, 1 + nameBytes.length);
    header.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    valueBytes.copy(header, 4 + nameBytes.length);
    headerParts.push(header);
  }
  const headerBytes = Buffer.concat(headerParts);
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const total = 12 + headerBytes.length + body.length + 4;
  const message = Buffer.alloc(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headerBytes.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headerBytes.copy(message, 12);
  body.copy(message, 12 + headerBytes.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

/** A Bedrock stream event (`:message-type: event`), its payload padded with `p` as Bedrock pads it. */
export function bedrockEvent(eventType: string, payload: Record<string, unknown>): Buffer {
  return encodeEventStreamMessage(
    { ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' },
    JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'.slice(0, 1 + (eventType.length % 30)) }),
  );
}

/** A Bedrock stream exception (`:message-type: exception`). */
export function bedrockException(exceptionType: string, message: string): Buffer {
  return encodeEventStreamMessage(
    { ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' },
    JSON.stringify({ message }),
  );
}
