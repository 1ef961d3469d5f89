import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * The figures of scripts/shape-report.ts that read the source (TypeScript parser, no type checking).
 *
 * - RequestMeter: its public members (properties, accessors and methods not marked `#`/private/static, a get/set pair
 *   once); the files other than request-meter.ts that write to a meter (assign one of its fields, or call a method that
 *   changes the meter: assigns a field of `this`, calls a mutating method of one, or calls such a method); the call
 *   sites of `….meter.finish(…)` (any receiver whose name ends in "meter") and of any function or method named `settle`
 *   (called, or bound with `settle.bind(…)`).
 * - Duplicate pairs: the `duplicates` command of the tool library over src/ (`duplicates --repo src`), its first line.
 * - Long files: .ts files over 400 lines. Long functions: functions, methods, accessors, constructors and arrow
 *   functions spanning over 80 lines, first line to last (a nested function is counted on its own too).
 */
export const SOURCE_ROOT = 'src';
const METER_FILE = 'src/relay/request-meter.ts';
export const LONG_FILE = 400;
export const LONG_FUNCTION = 80;
const MUTATING = new Set(['push', 'pop', 'shift', 'unshift', 'splice', 'set', 'add', 'delete', 'clear', 'sort']);

export function sourceFiles(directory: string): string[] {
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
  /** Null (with writingFiles) once src/ has no RequestMeter any more; the call sites are still counted. */
  publicMembers: number | null;
  writingFiles: string[] | null;
  finishSites: number;
  finishFiles: number;
  settleSites: number;
  settleFiles: number;
}

export function meterFigures(files: string[], meterFile: string = METER_FILE): MeterFigures {
  const meterSource = existsSync(meterFile) ? parse(meterFile) : null;
  let meterClass: ts.ClassDeclaration | undefined;
  if (meterSource !== null) {
    walk(meterSource, (node) => {
      if (ts.isClassDeclaration(node) && node.name?.text === 'RequestMeter') meterClass = node;
    });
  }
  const publicNames = new Set<string>();
  const fields = new Set<string>();
  const methodBodies = new Map<string, ts.Node>();
  for (const member of meterClass?.members ?? []) {
    if (ts.isConstructorDeclaration(member) || ts.isClassStaticBlockDeclaration(member) || member.name === undefined) continue;
    const name = member.name.getText(meterSource!);
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
        if (callee.expression.kind === ts.SyntaxKind.ThisKeyword) called.add(callee.name.getText(meterSource!));
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
          if (writers.has(callee.name.text) && name !== meterFile) writingFiles.add(name);
          if (callee.name.text === 'finish') {
            finishSites += 1;
            finishFiles.add(name);
          }
        }
        const calledName = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : null;
        // `settle.bind(…)` settles where the bound function is called: counted where it is bound.
        const boundName = calledName === 'bind' && ts.isPropertyAccessExpression(callee) ? (ts.isPropertyAccessExpression(callee.expression) ? callee.expression.name.text : ts.isIdentifier(callee.expression) ? callee.expression.text : null) : null;
        if (calledName === 'settle' || boundName === 'settle') {
          settleSites += 1;
          settleFiles.add(name);
        }
      }
      if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
        && ts.isPropertyAccessExpression(node.left) && isMeter(node.left.expression) && fields.has(node.left.name.text) && name !== meterFile) writingFiles.add(name);
    });
  }
  return {
    publicMembers: meterClass === undefined ? null : publicNames.size,
    writingFiles: meterClass === undefined ? null : [...writingFiles].sort(),
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

export function lengths(files: string[]): { longFiles: { file: string; lines: number }[]; longFunctions: LongFunction[] } {
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
export function duplicates(): DuplicateFigures {
  const command = 'duplicates --repo src --seconds 120';
  const run = spawnSync('duplicates', ['--repo', SOURCE_ROOT, '--seconds', '120', '--most', '1'], { encoding: 'utf8' });
  if (run.error !== undefined || run.status !== 0) return { pairs: null, command, firstLine: 'the duplicates command is not on this machine' };
  const firstLine = run.stdout.split('\n')[0] ?? '';
  const incomplete = run.stdout.split('\n').find((line) => line.startsWith('incomplete:'));
  const counted = /^(\d+) pairs?\b/.exec(firstLine);
  const pairs = incomplete !== undefined ? null : counted !== null ? Number(counted[1]) : /^no duplicates/.test(firstLine) ? 0 : null;
  return { pairs, command, firstLine: incomplete ?? firstLine };
}

