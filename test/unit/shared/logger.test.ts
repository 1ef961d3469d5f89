/**
 * The default logger writes standard output at most every 10 ms, one write for the lines of those milliseconds: lines
 * still waiting when the process exits are written then, and the exit hook is there only while lines wait. Run in child processes on the built logger
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
  it('writes the lines still waiting when the process exits before their write', () => {
    const { lines } = runChild("logger.info('first');\nlogger.warn('second');\nprocess.exit(0);");
    expect(lines.map((line) => line.message)).toEqual(['first', 'second']);
  });

  it('holds an exit hook only while lines wait, and writes each line once', () => {
    const { lines } = runChild([
      "const before = process.listenerCount('exit');",
      "logger.info('one');",
      "const waiting = process.listenerCount('exit') - before;",
      'await new Promise((resolve) => setTimeout(resolve, 50));',
      "const after = process.listenerCount('exit') - before;",
      "logger.info(`hooks while waiting ${waiting}, after the write ${after}`);",
      'process.exit(0);',
    ].join('\n'));
    expect(lines.map((line) => line.message)).toEqual(['one', 'hooks while waiting 1, after the write 0']);
  });

  it('writes the lines of several event-loop turns in one write, and a large backlog at once', () => {
    // The logger's timer is held until the test fires it, so a slow machine cannot let it run between the turns.
    const { lines } = runChild([
      'const writes = [];',
      'const write = process.stdout.write.bind(process.stdout);',
      'process.stdout.write = (chunk, ...rest) => { writes.push(String(chunk).length); return write(chunk, ...rest); };',
      'const held = [];',
      'const realSetTimeout = globalThis.setTimeout;',
      'globalThis.setTimeout = (callback, ms) => { held.push({ callback, ms }); return realSetTimeout(() => {}, 60_000); };',
      "for (const message of ['a', 'b', 'c']) {",
      '  logger.info(message);',
      '  await new Promise((resolve) => setImmediate(resolve));',
      '}',
      'const beforeTimer = writes.length;',
      'const delays = held.map((timer) => timer.ms).join();',
      'held.shift().callback();',
      'const turns = writes.length;',
      // 100 lines of 1,000 characters: written once 64 KiB waits, without waiting for the timer.
      "for (let index = 0; index < 100; index++) logger.info('x'.repeat(1000));",
      'const large = writes.length - turns;',
      'globalThis.setTimeout = realSetTimeout;',
      'process.stdout.write = write;',
      'logger.info(`timers ${delays}, writes before the timer ${beforeTimer}, for three turns ${turns}, during a large backlog ${large}`);',
      'process.exit(0);',
    ].join('\n'));
    expect(lines.at(-1)?.message).toBe('timers 10, writes before the timer 0, for three turns 1, during a large backlog 1');
    expect(lines.slice(0, 3).map((line) => line.message)).toEqual(['a', 'b', 'c']);
    expect(lines).toHaveLength(3 + 100 + 1);
  });
});
