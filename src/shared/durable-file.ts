import { randomBytes } from 'node:crypto';
import { mkdir, open, rename } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes `text` to a new file `<epoch ms>-<random><extension>` in `directory` (made with mode 0700 if missing),
 * complete or not at all, and on disk before it resolves: written under a temporary name, flushed (fsync), renamed,
 * and the directory flushed so the rename survives a power loss. The file is readable by its owner only. Returns
 * its path. Names sort by the time they were written.
 */
export async function writeDurableFile(directory: string, text: string, now: number, extension: string): Promise<string> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const name = `${String(now).padStart(13, '0')}-${randomBytes(4).toString('hex')}${extension}`;
  const file = path.join(directory, name);
  const partial = path.join(directory, `.${name}.partial`);
  const handle = await open(partial, 'w', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(partial, file);
  await syncDirectory(directory);
  return file;
}

/** Flushes a directory's entries (a file created, renamed or removed in it) to disk. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
