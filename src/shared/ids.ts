import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 12;

/** CSPRNG bytes drawn 4 KiB at a time: one system call per ~340 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomChars(count: number): string {
  if (poolOffset + count > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let out = '';
  for (let index = 0; index < count; index += 1) out += ALPHABET[(pool[poolOffset + index] as number) % 36];
  poolOffset += count;
  return out;
}

/** Time-sortable id: `<prefix>_<10 chars of ms time in base36, zero-padded><12 random base36 chars>`. */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(10, '0')}${randomChars(RANDOM_CHARS)}`;
}
