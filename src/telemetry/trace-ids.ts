import { randomFillSync } from 'node:crypto';

/** CSPRNG bytes drawn 4 KiB at a time: one system call per few hundred ids. */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** 16 random bytes as 32 lowercase hex digits, never all zero. */
export function newTraceId(): string {
  let id = randomHex(16);
  while (id === '00000000000000000000000000000000') id = randomHex(16);
  return id;
}

/** 8 random bytes as 16 lowercase hex digits, never all zero. */
export function newSpanId(): string {
  let id = randomHex(8);
  while (id === '0000000000000000') id = randomHex(8);
  return id;
}
