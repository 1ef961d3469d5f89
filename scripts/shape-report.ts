import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { importCycles, readImportGraph } from './import-graph.js';
import { measureRequestWalk, printWalk, walkOptionsFromArguments, type WalkReport } from './request-walk.js';

/**
 * `npm run arch:shape`: the code-shape figures of src/, each from a rule written here so a reader can repeat them.
 * `--json` prints them as JSON; `--no-walk` leaves out the chat walk (scripts/request-walk.ts, which starts a gateway).
 *
 * - RequestMeter: its public members (properties, accessors and methods not marked `#`/private, a get/set pair once);
 *   the files other than request-meter.ts that write to a meter (assign one of its fields, or call a method that
 *   changes the meter: assigns a field of `this`, calls a mutating method of one, or calls such a method); the call
 *   sites of `….meter.finish(…)` (any receiver whose name ends in "meter") and of any function or method named `settle`.
 * - Import cycles: scripts/import-graph.ts (the same reading as `npm run arch:cycles`).
 * - Duplicate pairs: the `duplicates` command of the tool library over src/ (`duplicates --repo src`), its first line.
 * - Long files: src/ .ts files over 400 lines. Long functions: functions, methods, accessors, constructors and arrow
 *   functions of src/ spanning over 80 lines, first line to last (a nested function is counted on its own too).
 */

const SOURCE_ROOT = 'src';
const METER_FILE = 'src/relay/request-meter.ts';
const LONG_FILE = 400;
const LONG_FUNCTION = 80;
const MUTATING = new Set(['push', 'pop', 'shift', 'unshift', 'splice', 'set', 'add', 'delete', 'clear', 'sort']);

function sourceFiles(directory: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(directory).sort()) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) found.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

const isPrivate = (member: ts.ClassElement): boolean =>
  (member.name !== undefined && ts.isPrivateIdentifier(member.name))
  || (ts.canHaveModifiers(member) && (ts.getModifiers(member) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword || modifier.kind === ts.SyntaxKind.ProtectedKeyword));

/** Whether an expression is `this.x` or `this.#x`. */
const isThisMember = (node: ts.Node): boolean => ts.isPropertyAccessExpression(node) && node.expression.kind === ts.SyntaxKind.ThisKeyword;

export interface MeterFigures {
  publicMembers: number;
  writingFiles: string[];
  finishSites: number;
  finishFiles: number;
  settleSites: number;
  settleFiles: number;
}

function meterFigures(files: string[]): MeterFigures {
  const meterSource = parse(METER_FILE);
  let meterClass: ts.ClassDeclaration | undefined;
  walk(meterSource, (node) => {
    if (ts.isClassDeclaration(node) && node.name?.text === 'RequestMeter') meterClass = node;
  });
  if (meterClass === undefined) throw new Error(`${METER_FILE} has no class RequestMeter`);
  const publicNames = new Set<string>();
  const fields = new Set<string>();
  const methodBodies = new Map<string, ts.Node>();
  for (const member of meterClass.members) {
    if (ts.isConstructorDeclaration(member) || ts.isClassStaticBlockDeclaration(member) || member.name === undefined) continue;
    const name = member.name.getText(meterSource);
    if (ts.isMethodDeclaration(member) && member.body !== undefined) methodBodies.set(name, member.body);
    if (ts.isPropertyDeclaration(member)) {
      const readonly = (ts.getModifiers(member) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ReadonlyKeyword);
      if (!readonly && !isPrivate(member)) fields.add(name);
    }
    const isStatic = ts.canHaveModifiers(member) && (ts.getModifiers(member) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword);
    if (!isPrivate(member) && !isStatic) publicNames.add(name);
  }
  // A method changes the meter when it assigns a field of `this`, calls a mutating method of one, or calls such a method.
  const changes = new Set<string>();
  const callsOf = new Map<string, Set<string>>();
  for (const [name, body] of methodBodies) {
    const called = new Set<string>();
    walk(body, (node) => {
      if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment && isThisMember(node.left)) changes.add(name);
      if ((ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) && isThisMember(node.operand)) changes.add(name);
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const callee = node.expression;
        if (isThisMember(callee.expression) && MUTATING.has(callee.name.text)) changes.add(name);
        if (callee.expression.kind === ts.SyntaxKind.ThisKeyword) called.add(callee.name.getText(meterSource));
      }
    });
    callsOf.set(name, called);
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, called] of callsOf) {
      if (changes.has(name) || ![...called].some((callee) => changes.has(callee))) continue;
      changes.add(name);
      grew = true;
    }
  }
  const writers = new Set([...changes].filter((name) => publicNames.has(name)));
  const isMeter = (expression: ts.Expression): boolean => /meter$/i.test(ts.isPropertyAccessExpression(expression) ? expression.name.text : expression.getText());

  const writingFiles = new Set<string>();
  const finishFiles = new Set<string>();
  const settleFiles = new Set<string>();
  let finishSites = 0;
  let settleSites = 0;
  for (const file of files) {
    const source = parse(file);
    const name = file.split('\\').join('/');
    walk(source, (node) => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isPropertyAccessExpression(callee) && isMeter(callee.expression)) {
          if (writers.has(callee.name.text) && name !== METER_FILE) writingFiles.add(name);
          if (callee.name.text === 'finish') {
            finishSites += 1;
            finishFiles.add(name);
          }
        }
        const calledName = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : null;
        if (calledName === 'settle') {
          settleSites += 1;
          settleFiles.add(name);
        }
      }
      if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
        && ts.isPropertyAccessExpression(node.left) && isMeter(node.left.expression) && fields.has(node.left.name.text) && name !== METER_FILE) writingFiles.add(name);
    });
  }
  return {
    publicMembers: publicNames.size,
    writingFiles: [...writingFiles].sort(),
    finishSites,
    finishFiles: finishFiles.size,
    settleSites,
    settleFiles: settleFiles.size,
  };
}

export interface LongFunction {
  at: string;
  name: string;
  lines: number;
}

function lengths(files: string[]): { longFiles: { file: string; lines: number }[]; longFunctions: LongFunction[] } {
  const longFiles: { file: string; lines: number }[] = [];
  const longFunctions: LongFunction[] = [];
  for (const file of files) {
    const name = file.split('\\').join('/');
    const source = parse(file);
    const lines = source.getLineStarts().length - (source.text.endsWith('\n') ? 1 : 0);
    if (lines > LONG_FILE) longFiles.push({ file: name, lines });
    walk(source, (node) => {
      if (!ts.isFunctionLike(node) || !('body' in node) || node.body === undefined) return;
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 <= LONG_FUNCTION) return;
      const named = (node as ts.FunctionLikeDeclaration).name;
      const parent = node.parent;
      const label = named !== undefined ? named.getText(source)
        : ts.isConstructorDeclaration(node) ? 'constructor'
          : ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) ? parent.name.getText(source) : '(anonymous)';
      longFunctions.push({ at: `${name}:${first + 1}`, name: label, lines: last - first + 1 });
    });
  }
  return { longFiles: longFiles.sort((a, b) => b.lines - a.lines), longFunctions: longFunctions.sort((a, b) => b.lines - a.lines) };
}

export interface DuplicateFigures {
  pairs: number | null;
  command: string;
  firstLine: string;
}

/** The tool library's `duplicates` over src/, when this machine has it (it is not a package of the project). */
function duplicates(): DuplicateFigures {
  const command = 'duplicates --repo src --seconds 120';
  const run = spawnSync('duplicates', ['--repo', SOURCE_ROOT, '--seconds', '120', '--most', '1'], { encoding: 'utf8' });
  if (run.error !== undefined || run.status !== 0) return { pairs: null, command, firstLine: 'the duplicates command is not on this machine' };
  const firstLine = run.stdout.split('\n')[0] ?? '';
  const incomplete = run.stdout.split('\n').find((line) => line.startsWith('incomplete:'));
  const counted = /^(\d+) pairs?\b/.exec(firstLine);
  const pairs = incomplete !== undefined ? null : counted !== null ? Number(counted[1]) : /^no duplicates/.test(firstLine) ? 0 : null;
  return { pairs, command, firstLine: incomplete ?? firstLine };
}

export interface ShapeReport {
  meter: MeterFigures;
  cycles: { all: number; throughValues: number };
  duplicates: DuplicateFigures;
  longFiles: { file: string; lines: number }[];
  longFunctions: LongFunction[];
  walk: WalkReport | null;
}

export async function shapeReport(withWalk: boolean): Promise<ShapeReport> {
  const files = sourceFiles(SOURCE_ROOT).map((file) => relative(resolve('.'), resolve(file)));
  const graph = readImportGraph(SOURCE_ROOT);
  return {
    meter: meterFigures(files),
    cycles: { all: importCycles(graph.all).length, throughValues: importCycles(graph.value).length },
    duplicates: duplicates(),
    ...lengths(files),
    walk: withWalk ? await measureRequestWalk(walkOptionsFromArguments()) : null,
  };
}

function printShape(report: ShapeReport, list: boolean): void {
  const rows: [string, string][] = [];
  if (report.walk !== null) {
    rows.push(['chat walk: steps / files / climbs', `${report.walk.steps} / ${report.walk.files} / ${report.walk.climbs}`]);
    rows.push(['chat walk in order: entries / moves / climbs back up', `${report.walk.entered} / ${report.walk.moves} / ${report.walk.climbsBackUp}`]);
    rows.push(['chat walk: RequestMeter visits', String(report.walk.meterVisits)]);
  }
  rows.push(
    ['RequestMeter public members', String(report.meter.publicMembers)],
    ['files writing to a meter', String(report.meter.writingFiles.length)],
    ['meter.finish call sites (files)', `${report.meter.finishSites} (${report.meter.finishFiles})`],
    ['settle( call sites (files)', `${report.meter.settleSites} (${report.meter.settleFiles})`],
    ['import cycles (through values)', `${report.cycles.all} (${report.cycles.throughValues})`],
    ['duplicate pairs in src/', report.duplicates.pairs === null ? `— (${report.duplicates.firstLine})` : String(report.duplicates.pairs)],
    [`files over ${LONG_FILE} lines`, String(report.longFiles.length)],
    [`functions over ${LONG_FUNCTION} lines`, String(report.longFunctions.length)],
  );
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
  if (!list) return;
  console.log(`\nfiles writing to a meter:\n  ${report.meter.writingFiles.join('\n  ')}`);
  console.log(`\nfiles over ${LONG_FILE} lines:\n${report.longFiles.map((file) => `  ${file.lines} ${file.file}`).join('\n')}`);
  console.log(`\nfunctions over ${LONG_FUNCTION} lines:\n${report.longFunctions.map((fn) => `  ${fn.lines} ${fn.at} ${fn.name}`).join('\n')}`);
  if (report.walk !== null) {
    console.log('');
    printWalk(report.walk, true);
  }
}

const report = await shapeReport(!process.argv.includes('--no-walk'));
if (process.argv.includes('--json')) console.log(JSON.stringify(report, null, 2));
else printShape(report, process.argv.includes('--list'));
// The walk's gateway is closed; a kept-alive client socket must not hold the process open.
process.exit(0);
