import { readFileSync } from 'node:fs';

/**
 * The arguments of a profile report (`FILE [rows]`): the profile read as JSON and how many rows a list shows (30 when
 * not given). Without a file it prints `usage` and exits with status 2.
 */
export function profileFileArguments(usage: string): { profile: unknown; rows: number } {
  const [file, rowsArgument] = process.argv.slice(2);
  if (file === undefined) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return { profile: JSON.parse(readFileSync(file, 'utf8')) as unknown, rows: Number(rowsArgument ?? 30) };
}
