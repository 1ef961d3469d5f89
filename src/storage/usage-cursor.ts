/** Position in the newest-first usage order: the last row's (createdAt, requestId). */
export interface UsageCursor {
  createdAt: number;
  requestId: string;
}

export class InvalidCursorError extends Error {
  constructor() {
    super('Invalid pagination cursor');
    this.name = 'InvalidCursorError';
  }
}

/** Opaque to callers: base64url of a JSON pair. */
export function encodeUsageCursor(cursor: UsageCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.requestId]), 'utf8').toString('base64url');
}

/** Throws `InvalidCursorError` for anything `encodeUsageCursor` did not produce. */
export function decodeUsageCursor(text: string): UsageCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (!Array.isArray(value) || value.length !== 2) throw new InvalidCursorError();
  const [createdAt, requestId]: unknown[] = value;
  if (typeof createdAt !== 'number' || !Number.isSafeInteger(createdAt) || typeof requestId !== 'string') {
    throw new InvalidCursorError();
  }
  return { createdAt, requestId };
}
