import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { UsageLogRow } from '../domain/usage-records.js';
import { writeDurableFile } from '../shared/durable-file.js';
import { decodeUsageRow as decode, encodeUsageRow as encode } from './usage-row-json.js';

/** Folder of the data directory holding usage-log batches that could not be written (yet). */
export const DEAD_LETTER_FOLDER = 'usage-dead-letter';

export function deadLetterDirectory(dataDirectory: string): string {
  return path.join(dataDirectory, DEAD_LETTER_FOLDER);
}

/**
 * Writes a batch to a new file `<epoch ms>-<random>.jsonl` (one row a line), complete or not at all and on disk
 * (fsync) before it resolves. Usage rows are metadata only (no prompt or answer text). Returns the file.
 */
export function writeDeadLetter(directory: string, rows: readonly UsageLogRow[], now: number): Promise<string> {
  return writeDurableFile(directory, `${rows.map(encode).join('\n')}\n`, now, '.jsonl');
}

/** The dead-letter files, oldest first (none when the folder does not exist). */
export async function listDeadLetters(directory: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names.filter((name) => name.endsWith('.jsonl') && !name.startsWith('.')).sort().map((name) => path.join(directory, name));
}

export async function readDeadLetter(file: string): Promise<UsageLogRow[]> {
  const text = await readFile(file, 'utf8');
  return text.split('\n').filter((line) => line.trim() !== '').map(decode);
}
