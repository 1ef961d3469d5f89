import { ERROR_CODES, errorTypeForStatus, type ErrorCode } from './error-codes.js';

/** Where docs/errors.md holds the generated table. */
export const TABLE_START = '<!-- error codes: generated from src/errors/error-codes.ts -->';
export const TABLE_END = '<!-- end of error codes -->';

/** Every error code as a Markdown table (status, type, code, meaning), by status then code: docs/errors.md holds it. */
export function errorCodesTable(): string {
  const codes = (Object.keys(ERROR_CODES) as ErrorCode[]).sort((a, b) => ERROR_CODES[a].status - ERROR_CODES[b].status || a.localeCompare(b));
  const rows = codes.map((code) => {
    const { status, meaning } = ERROR_CODES[code];
    return `| ${status} | \`${errorTypeForStatus(status)}\` | \`${code}\` | ${meaning.replace(/\|/g, '\\|')} |`;
  });
  return ['| status | `error.type` | `error.code` | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
