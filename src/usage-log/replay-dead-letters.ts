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

const isGone = (error: unknown): boolean => (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';

/**
 * Writes every kept file's rows to the usage log, oldest first, and removes each file once its rows are in. The
 * gateway runs it in the background (dead-letter-replayer.ts); `unigate usage replay` runs the same. Safe to repeat
 * and to run twice at once: a request id already logged is skipped by the insert, and a file that vanished meanwhile
 * was applied by the other run (or by the writer's own retry).
 */
export async function replayDeadLetters(usage: Pick<Storage['usage'], 'insertBatch'>, directory: string): Promise<DeadLetterReplay> {
  const result: DeadLetterReplay = { replayed: [], failed: [] };
  for (const file of await listDeadLetters(directory)) {
    let rows: number;
    try {
      const batch = await readDeadLetter(file);
      rows = batch.length;
      await usage.insertBatch(batch);
    } catch (error) {
      if (!isGone(error)) result.failed.push({ file: path.basename(file), reason: error instanceof Error ? error.message : String(error) });
      continue;
    }
    await rm(file, { force: true });
    result.replayed.push({ file: path.basename(file), rows });
  }
  return result;
}
