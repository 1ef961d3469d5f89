import type { FinishedLine } from '../domain/batches.js';

/** Why a line that never ran has no answer, as OpenAI's error file says it. */
const NOT_RUN = {
  cancelled: { code: 'batch_cancelled', message: 'This request was not run: the batch was cancelled.' },
  expired: { code: 'batch_expired', message: 'This request could not be run before the completion window expired.' },
} as const;

export interface BatchResultFiles {
  /** The answers of the lines that succeeded, JSONL in line order; empty when none did. */
  output: string;
  /** The lines that failed or never ran; empty when none. */
  errors: string;
}

/** One result line: `{ id, custom_id, response: { status_code, request_id, body }, error }`. */
function resultLine(batchId: string, line: FinishedLine): string {
  const id = `batch_req_${batchId.replace(/^batch_/, '')}_${line.line}`;
  if (line.state === 'cancelled' || line.state === 'expired') {
    return JSON.stringify({ id, custom_id: line.customId, response: null, error: NOT_RUN[line.state] });
  }
  const body: unknown = line.result === null ? null : JSON.parse(line.result);
  return JSON.stringify({ id, custom_id: line.customId, response: { status_code: line.statusCode, request_id: line.requestId, body }, error: null });
}

/** The output and error files of a finished batch (OpenAI's format). */
export function batchResultFiles(batchId: string, lines: readonly FinishedLine[]): BatchResultFiles {
  const output: string[] = [];
  const errors: string[] = [];
  for (const line of lines) (line.state === 'done' ? output : errors).push(`${resultLine(batchId, line)}\n`);
  return { output: output.join(''), errors: errors.join('') };
}
