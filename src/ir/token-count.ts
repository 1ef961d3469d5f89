/** Input tokens a request would use, from the upstream's own counter or the local tokenizer. */
export interface TokenCount {
  inputTokens: number;
  source: 'upstream' | 'local';
}
