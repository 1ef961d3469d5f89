import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine, looksLikeFormula } from '../../../src/shared/csv.js';

/** What a spreadsheet reads a field as: RFC 4180 unquoted. */
function unquote(field: string): string {
  return field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field;
}

describe('csvField', () => {
  it('keeps would-be formulas text, also after leading spaces, tabs and line breaks', () => {
    for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)', ' =HYPERLINK("http://x")', '   +cmd', '\t=1', '\r=1', '\n-2', ' \t @A1', '\u00a0=1', '\u200b=1', '\uff1d1+1', '\t', '\r']) {
      const field = csvField(formula);
      expect(unquote(field).startsWith("'"), JSON.stringify(formula)).toBe(true);
      expect(unquote(field).slice(1)).toBe(formula);
    }
  });

  it('leaves ordinary text, numbers and nulls alone', () => {
    expect(csvField('gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(csvField(' hello')).toBe(' hello');
    expect(csvField('a-b')).toBe('a-b');
    expect(csvField(-1.5)).toBe('-1.5');
    expect(csvField(0)).toBe('0');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField('say "hi", then go')).toBe('"say ""hi"", then go"');
    expect(csvLine(['a', 1, null, '=x'])).toBe("a,1,,'=x\r\n");
  });

  it('never lets text reach a spreadsheet as a formula, and loses nothing of it', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 24 }), (text) => {
      const read = unquote(csvField(text));
      const shown = read.startsWith("'") && looksLikeFormula(text) ? read.slice(1) : read;
      expect(shown).toBe(text);
      expect(looksLikeFormula(read)).toBe(false);
    }));
  });
});
