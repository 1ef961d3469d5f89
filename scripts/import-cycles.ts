import { importCycles, loopsMet, readImportGraph, shortestLoop } from './import-graph.js';

/**
 * `npm run arch:cycles`: the import cycles of src/, all of them (type imports included) and those through value
 * imports only, which load modules in a loop at run time. Exits 1 when a value cycle exists, so CI fails on one.
 */
const root = process.argv.slice(2).find((argument) => !argument.startsWith('--')) ?? 'src';
const graph = readImportGraph(root);
const allCycles = importCycles(graph.all);
const valueCycles = importCycles(graph.value);
const count = (edges: Map<string, Set<string>>): number => [...edges.values()].reduce((sum, targets) => sum + targets.size, 0);

console.log(`${root}/: ${graph.files.length} files, ${count(graph.all)} imports (${count(graph.value)} through values)`);
console.log(`import cycles: ${allCycles.length} (files in them: ${allCycles.reduce((sum, cycle) => sum + cycle.length, 0)})`);
console.log(`import cycles through values: ${valueCycles.length}`);
console.log(`loops a depth-first walk meets: ${loopsMet(graph.all).length} (through values: ${loopsMet(graph.value).length})`);
for (const cycle of valueCycles) {
  console.log(`\nvalue cycle of ${cycle.length} files:\n  ${cycle.join('\n  ')}`);
  console.log(`one loop: ${shortestLoop(graph.value, cycle).join(' → ')}`);
}
if (process.argv.includes('--all')) {
  for (const cycle of allCycles) console.log(`\ncycle of ${cycle.length} files (type imports included): ${shortestLoop(graph.all, cycle).join(' → ')}`);
}
if (valueCycles.length > 0) process.exitCode = 1;
