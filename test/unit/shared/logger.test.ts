/**
 * The default logger writes standard output once per event-loop turn: lines still waiting when the process exits are
 * written then, and the exit hook is there only while lines wait. Run in child processes on the built logger
 * (`npm test` builds first), since what matters is what reaches a real stdout before a real exit.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../e2e/cli/cli-process.js';

const LOGGER = pathToFileURL(path.join(REPO_ROOT, 'dist', 'src', 'shared', 'logger.js')).href;

function runChild(body: string): { lines: Array<{ message: string }> } {
  const script = `import { createLogger } from ${JSON.stringify(LOGGER)};\nconst logger = createLogger('info');\n${body}`;
  const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  return { lines: stdout.trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { message: string }) };
}

describe('batched standard output', () => {
  it('writes the lines still waiting when the process exits before the turn ends', () => {
    const { lines } = runChild("logger.info('first');\nlogger.warn('second');\nprocess.exit(0);");
    expect(lines.map((line) => line.message)).toEqual(['first', 'second']);
  });

  it('holds an exit hook only while lines wait, and writes each line once', () => {
    const { lines } = runChild([
      "const before = process.listenerCount('exit');",
      "logger.info('one');",
      "const waiting = process.listenerCount('exit') - before;",
      'await new Promise((resolve) => setImmediate(resolve));',
      "const after = process.listenerCount('exit') - before;",
      "logger.info(`hooks while waiting ${waiting}, after the write ${after}`);",
      'process.exit(0);',
    ].join('\n'));
    expect(lines.map((line) => line.message)).toEqual(['one', 'hooks while waiting 1, after the write 0']);
  });
});
