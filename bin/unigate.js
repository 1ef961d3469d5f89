#!/usr/bin/env node
// Entry point of the `unigate` command (npm start runs `unigate serve`). The TypeScript is compiled by `npm ci`.
//
// The gateway needs Node.js 22.12 or newer (it stores SQLite through Node's built-in node:sqlite). `npm ci` brings
// Node.js 24 as a package (node_modules/.bin/node), and every npm script runs on it. Started directly by an older
// Node (an operator's system Node 20, say), this file starts itself again on that bundled Node, passing the
// arguments, the Node options, the standard streams and the termination signals through, and exits as it exits.
// This file alone must keep working on Node 20: nothing of the gateway is loaded before the check.
//
// `serve` (the default command) runs on jemalloc where the library is installed (Linux): the process starts itself
// again in place with it preloaded (same pid, no wrapper) unless MEMORY_ALLOCATOR=system or the operator's own
// LD_PRELOAD says otherwise; the short commands keep the system allocator.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MINIMUM = [22, 12];

function supported(version) {
  const [major, minor] = version.split('.').map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

/** The Node binary of this platform's package that `npm ci` installed, or null. */
function bundledNode() {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const name = `node-${platform}-${process.arch}`;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
    const binary = resolve(dirname(manifest), process.platform === 'win32' ? 'bin/node.exe' : 'bin/node');
    return binary;
  } catch {
    return null;
  }
}

if (supported(process.versions.node)) {
  const args = process.argv.slice(2);
  const allocator = await import('../dist/src/config/memory-allocator.js');
  if ((args[0] ?? 'serve') === 'serve') allocator.restartOnJemalloc(fileURLToPath(import.meta.url), args);
  allocator.forgetLauncherVariables();
  // Before anything imports them: zod's bundle of every language's messages resolves to English alone, and kysely to
  // the one module the build bundled it into.
  (await import('../dist/src/config/zod-locales.js')).loadZodInEnglishOnly();
  (await import('../dist/src/config/bundled-kysely.js')).loadKyselyFromBundle();
  const { main } = await import('../dist/src/cli.js');
  await main(args);
} else {
  const node = bundledNode();
  if (node === null) {
    process.stderr.write(`unigate needs Node.js ${MINIMUM.join('.')} or newer; this is ${process.version}. Run "npm ci" in ${resolve(dirname(fileURLToPath(import.meta.url)), '..')} (it installs Node.js 24 for this platform where the registry has it) or install Node.js 24 LTS.\n`);
    process.exit(1);
  }
  const child = spawn(node, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('error', (error) => {
    process.stderr.write(`unigate could not start ${node}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
  });
}
