import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The static import graph of a source tree, read with the TypeScript parser (no type checking). An edge is a value
 * edge when the import loads the module at run time; `import type …` and `export type … from` are type edges, erased
 * by the compiler. Under `verbatimModuleSyntax` an import whose every name is marked `type` inline still loads the
 * module (it compiles to `import {} from …`), so it counts as a value edge. Dynamic `import()` is not an edge: it
 * loads the module when called, never while the importer is being loaded.
 */
export interface ImportGraph {
  /** Source files, relative to the root, `/`-separated. */
  files: string[];
  /** Every static import between two files of the tree. */
  all: Map<string, Set<string>>;
  /** The imports that load the module at run time. */
  value: Map<string, Set<string>>;
}

const SOURCE = /\.tsx?$/;

function sourceFiles(directory: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(directory).sort()) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) found.push(...sourceFiles(path));
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the source tree), or null outside the tree. */
function resolveSpecifier(fromFile: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(m|c)?jsx?$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, base, join(base, 'index.ts')]) {
    if (SOURCE.test(candidate) && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

interface ImportEdge {
  specifier: string;
  typeOnly: boolean;
}

/** The static imports and re-exports of one file. */
export function importsOf(fileName: string, text: string): ImportEdge[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      edges.push({ specifier: statement.moduleSpecifier.text, typeOnly: statement.importClause?.isTypeOnly === true });
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      edges.push({ specifier: statement.moduleSpecifier.text, typeOnly: statement.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(statement) && ts.isExternalModuleReference(statement.moduleReference)) {
      const reference = statement.moduleReference.expression;
      if (ts.isStringLiteral(reference)) edges.push({ specifier: reference.text, typeOnly: statement.isTypeOnly });
    }
  }
  return edges;
}

/** Reads every `.ts`/`.tsx` file under `root` and builds its import graph. */
export function readImportGraph(root: string): ImportGraph {
  const absolute = sourceFiles(resolve(root));
  const name = (path: string): string => relative(resolve(root), path).split('\\').join('/');
  const all = new Map<string, Set<string>>();
  const value = new Map<string, Set<string>>();
  for (const file of absolute) {
    const from = name(file);
    all.set(from, new Set());
    value.set(from, new Set());
    for (const edge of importsOf(file, readFileSync(file, 'utf8'))) {
      const target = resolveSpecifier(file, edge.specifier);
      if (target === null) continue;
      all.get(from)!.add(name(target));
      if (!edge.typeOnly) value.get(from)!.add(name(target));
    }
  }
  return { files: absolute.map(name), all, value };
}

/**
 * The import cycles of a graph as its strongly connected components (Tarjan): each group of two or more files that
 * reach one another, or one file importing itself. Files and groups come out sorted, so the report is stable.
 */
export function importCycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;

  // Iterative, so a deep import chain cannot overflow the call stack.
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work: { node: string; next: Iterator<string> }[] = [];
    const open = (node: string): void => {
      index.set(node, counter);
      lowLink.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: [...(graph.get(node) ?? [])].sort()[Symbol.iterator]() });
    };
    open(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const step = frame.next.next();
      if (!step.done) {
        const target = step.value;
        if (!index.has(target)) open(target);
        else if (onStack.has(target)) lowLink.set(frame.node, Math.min(lowLink.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) lowLink.set(parent.node, Math.min(lowLink.get(parent.node)!, lowLink.get(frame.node)!));
      if (lowLink.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfImport = component.length === 1 && graph.get(frame.node)?.has(frame.node) === true;
      if (component.length > 1 || selfImport) components.push(component.sort());
    }
  }
  return components.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
}

/** One shortest loop through a cycle's first file, staying inside the cycle: the path a reader follows to break it. */
export function shortestLoop(graph: Map<string, Set<string>>, component: readonly string[]): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}

/**
 * The loops a depth-first walk meets (each import back to a file still on the walk's path closes one), the way
 * dependency tools such as madge count "circular dependencies". A finer figure than the cycles (one cycle holds
 * many loops); it depends on the walk's order, which is sorted here so it repeats.
 */
export function loopsMet(graph: Map<string, Set<string>>): string[][] {
  const loops: string[][] = [];
  const done = new Set<string>();
  for (const start of [...graph.keys()].sort()) {
    if (done.has(start)) continue;
    const path: string[] = [];
    const onPath = new Set<string>();
    const work: { node: string; next: Iterator<string> }[] = [];
    const enter = (node: string): void => {
      path.push(node);
      onPath.add(node);
      work.push({ node, next: [...(graph.get(node) ?? [])].sort()[Symbol.iterator]() });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const step = frame.next.next();
      if (step.done) {
        work.pop();
        path.pop();
        onPath.delete(frame.node);
        done.add(frame.node);
        continue;
      }
      const target = step.value;
      if (onPath.has(target)) loops.push([...path.slice(path.indexOf(target)), target]);
      else if (!done.has(target)) enter(target);
    }
  }
  return loops;
}
