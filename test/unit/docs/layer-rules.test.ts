import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * Every folder of src/ is a layer: it has its import rule in eslint.config.js (`BOUNDARIES`) and its row in the layer
 * table of docs/architecture.md, so a new folder cannot go unchecked or unexplained.
 */
const root = new URL('../../../', import.meta.url);
const layers = readdirSync(new URL('src/', root), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
const lint = readFileSync(new URL('eslint.config.js', root), 'utf8');
const docs = readFileSync(new URL('docs/architecture.md', root), 'utf8');
const table = docs.slice(docs.indexOf('## Layer rules'), docs.indexOf('\n## ', docs.indexOf('## Layer rules') + 1));
const tableLayers = new Set(table.split('\n').filter((line) => line.startsWith('| `')).flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([a-z-]+)\/`/g)].map((match) => match[1])));

describe('the layers of src/', () => {
  it.each(layers)('%s has its import rule in eslint.config.js', (layer) => {
    expect(lint).toContain(`folder: 'src/${layer}'`);
  });

  it.each(layers)('%s has its row in the layer table of docs/architecture.md', (layer) => {
    expect(tableLayers.has(layer)).toBe(true);
  });

  it('the table names no folder src/ lacks', () => {
    expect([...tableLayers].filter((layer) => !layers.includes(layer as string))).toEqual([]);
  });
});
