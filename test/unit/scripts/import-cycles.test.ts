import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { importCycles, loopsMet, readImportGraph, shortestLoop } from '../../../scripts/import-graph.js';

const graphOf = (edges: Record<string, string[]>): Map<string, Set<string>> => new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));

describe('import cycles', () => {
  const root = mkdtempSync(join(tmpdir(), 'import-cycles-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  // low/a ⇄ high/b through values; low/a → high/c → low/a closed only by a type import; d imports itself.
  write('low/a.ts', "import { b } from '../high/b.js';\nimport { c } from '../high/c.js';\nexport const a = b + c;\n");
  write('high/b.ts', "import { a } from '../low/a.js';\nexport const b = 1;\nexport const twice = (): number => a * 2;\n");
  write('high/c.ts', "import type { A } from '../low/types.js';\nexport const c: A = 2;\n");
  write('low/types.ts', "import type { a } from './a.js';\nexport type A = typeof a;\n");
  write('d/index.ts', "export { d } from './index.js';\nexport type { A } from '../low/types.js';\n");
  write('e.ts', "import { type A } from './low/types.js';\nexport const e: A = 3;\nexport const lazy = () => import('./d/index.js');\n");

  it('reads value and type edges from the source, resolving .js specifiers and folder indexes', () => {
    const graph = readImportGraph(root);
    expect(graph.files).toEqual(['d/index.ts', 'e.ts', 'high/b.ts', 'high/c.ts', 'low/a.ts', 'low/types.ts']);
    expect([...graph.all.get('high/c.ts')!]).toEqual(['low/types.ts']);
    expect([...graph.value.get('high/c.ts')!]).toEqual([]);
    expect([...graph.value.get('d/index.ts')!]).toEqual(['d/index.ts']);
    // An import whose names are all marked type inline still loads the module under verbatimModuleSyntax;
    // a dynamic import() is no edge.
    expect([...graph.value.get('e.ts')!]).toEqual(['low/types.ts']);
  });

  it('finds every cycle, and apart those that run through value imports only', () => {
    const graph = readImportGraph(root);
    expect(importCycles(graph.all)).toEqual([['d/index.ts'], ['high/b.ts', 'high/c.ts', 'low/a.ts', 'low/types.ts']]);
    expect(importCycles(graph.value)).toEqual([['d/index.ts'], ['high/b.ts', 'low/a.ts']]);
    expect(shortestLoop(graph.value, ['high/b.ts', 'low/a.ts'])).toEqual(['high/b.ts', 'low/a.ts', 'high/b.ts']);
  });

  it('separates two cycles joined by a one-way import, and finds none in a chain', () => {
    const graph = graphOf({ a: ['b'], b: ['a', 'c'], c: ['d'], d: ['c'], e: ['a'] });
    expect(importCycles(graph)).toEqual([['a', 'b'], ['c', 'd']]);
    expect(importCycles(graphOf({ a: ['b'], b: ['c'], c: [] }))).toEqual([]);
  });

  it('gives the shortest loop inside a cycle and counts the loops a walk meets', () => {
    const graph = graphOf({ a: ['b', 'c'], b: ['c'], c: ['a'] });
    expect(importCycles(graph)).toEqual([['a', 'b', 'c']]);
    expect(shortestLoop(graph, ['a', 'b', 'c'])).toEqual(['a', 'c', 'a']);
    // c is done once the walk leaves it, so a → c closes no second loop: the count depends on the walk.
    expect(loopsMet(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('walks a long chain without overflowing the stack', () => {
    const edges: Record<string, string[]> = {};
    for (let i = 0; i < 20_000; i += 1) edges[`f${i}`] = [`f${(i + 1) % 20_000}`];
    expect(importCycles(graphOf(edges))[0]).toHaveLength(20_000);
  });

  it('finds no cycle through value imports in src/ (loading a module never loads its importer first)', () => {
    const graph = readImportGraph(fileURLToPath(new URL('../../../src', import.meta.url)));
    expect(graph.files.length).toBeGreaterThan(100);
    expect(importCycles(graph.value).map((cycle) => shortestLoop(graph.value, cycle).join(' → '))).toEqual([]);
  });
});
