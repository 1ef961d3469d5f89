import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importCycles, readImportGraph } from './import-graph.js';
import { measureRequestWalk, printWalk, walkOptionsFromArguments, type WalkReport } from './request-walk.js';
import {
  duplicates, lengths, LONG_FILE, LONG_FUNCTION, meterFigures, SOURCE_ROOT, sourceFiles, type DuplicateFigures, type LongFunction, type MeterFigures,
} from './source-shape.js';

/**
 * `npm run arch:shape`: the code-shape figures of src/, each from a rule written in code so a reader can repeat them
 * (docs/architecture.md, "Measuring the shape"). `--json` prints them as JSON, `--list` the lists behind them;
 * `--no-walk` leaves out the chat walk (scripts/request-walk.ts, which starts a gateway). The source figures are
 * scripts/source-shape.ts; import cycles are read as `npm run arch:cycles` reads them (scripts/import-graph.ts).
 */

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
  const { meter } = report;
  const rows: [string, string][] = [];
  if (report.walk !== null) {
    rows.push(['chat walk: steps / files / climbs', `${report.walk.steps} / ${report.walk.files} / ${report.walk.climbs}`]);
    rows.push(['chat walk in order: entries / moves / climbs back up', `${report.walk.entered} / ${report.walk.moves} / ${report.walk.climbsBackUp}`]);
    rows.push(['chat walk: RequestMeter visits', String(report.walk.meterVisits)]);
  }
  rows.push(
    ['RequestMeter public members', meter.publicMembers === null ? '— (no RequestMeter in src/)' : String(meter.publicMembers)],
    ['files writing to a meter', meter.writingFiles === null ? '—' : String(meter.writingFiles.length)],
    ['meter.finish call sites (files)', `${meter.finishSites} (${meter.finishFiles})`],
    ['settle( call sites (files)', `${meter.settleSites} (${meter.settleFiles})`],
    ['import cycles (through values)', `${report.cycles.all} (${report.cycles.throughValues})`],
    ['duplicate pairs in src/', report.duplicates.pairs === null ? `— (${report.duplicates.firstLine})` : String(report.duplicates.pairs)],
    [`files over ${LONG_FILE} lines`, String(report.longFiles.length)],
    [`functions over ${LONG_FUNCTION} lines`, String(report.longFunctions.length)],
  );
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
  if (!list) return;
  if (meter.writingFiles !== null) console.log(`\nfiles writing to a meter:\n  ${meter.writingFiles.join('\n  ')}`);
  console.log(`\nfiles over ${LONG_FILE} lines:\n${report.longFiles.map((file) => `  ${file.lines} ${file.file}`).join('\n')}`);
  console.log(`\nfunctions over ${LONG_FUNCTION} lines:\n${report.longFunctions.map((fn) => `  ${fn.lines} ${fn.at} ${fn.name}`).join('\n')}`);
  if (report.walk !== null) {
    console.log('');
    printWalk(report.walk, true);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const report = await shapeReport(!process.argv.includes('--no-walk'));
  if (process.argv.includes('--json')) console.log(JSON.stringify(report, null, 2));
  else printShape(report, process.argv.includes('--list'));
  // The walk's gateway is closed; a kept-alive client socket must not hold the process open.
  process.exit(0);
}
