import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Storage } from '../storage/storage.js';
import { listDeadLetters, readDeadLetter } from './dead-letter-file.js';

export interface DeadLetterReplay {
  /** Files written to the usage log and removed. */
  replayed: Array<{ file: string; rows: number }>;
  /** Files kept because they could not be read or written, with the reason (no row content). */
  failed: Array<{ file: string; reason: string }>;
}

/**
 * Writes every dead-letter file's rows to the usage log, oldest first, and removes each file once its rows are in.
 * Safe to repeat: a request id already logged is skipped by the insert.
 */
export async function replayDeadLetters(usage: Pick<Storage['usage'], 'insertBatch'>, directory: string): Promise<DeadLetterReplay> {
  const result: DeadLetterReplay = { replayed: [], failed: [] };
  for (const file of await listDeadLetters(directory)) {
    try {
      const rows = await readDeadLetter(file);
      await usage.insertBatch(rows);
      await rm(file);
      result.replayed.push({ file: path.basename(file), rows: rows.length });
    } catch (error) {
      result.failed.push({ file: path.basename(file), reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}
