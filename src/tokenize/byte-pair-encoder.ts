import { NOT_A_TOKEN, rankOf, type RankTable } from './rank-table.js';

const NO_MERGE = 0x7fffffff;
const REPLACEMENT_CHARACTER = 0xfffd;
/**
 * What the counts of merged pieces may hold, in characters of the pieces plus ENTRY_COST for each: at most 4,096
 * pieces and 64 Ki characters, ~0.4 MiB of heap.
 */
const REMEMBERED_COST = 65_536;
const ENTRY_COST = 16;

/**
 * A tiktoken-style byte-pair encoder: the split pattern cuts text into pieces, each piece's UTF-8 bytes are one
 * token when the vocabulary has them whole, else merged pair by pair, lowest rank first (leftmost on ties), until no
 * adjacent pair is a token. Special tokens get no treatment: text such as `<|endoftext|>` is encoded as ordinary text.
 * Not re-entrant: the buffers it works in are reused from one piece to the next.
 */
export class BytePairEncoder {
  private piece = new Uint8Array(256);
  /** boundaries between the parts of the piece being merged */
  private partStarts = new Int32Array(257);
  /** `partRanks[i]`: the rank of parts i and i + 1 merged, or NO_MERGE */
  private partRanks = new Int32Array(257);
  private pieceLength = 0;
  /** token counts of recent pieces that took merges, the costly ones (a CJK run, a rare word) */
  private readonly mergedCounts = new Map<string, number>();
  private mergedCountsCost = 0;

  constructor(
    private readonly table: RankTable,
    private readonly splitPattern: RegExp,
  ) {
    if (!splitPattern.global) throw new Error('the split pattern needs the g flag');
  }

  /** How many tokens `text` encodes to. */
  count(text: string): number {
    const pattern = this.restartSplit();
    let tokens = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const piece = match[0];
      if (this.wholeRank(piece) !== NOT_A_TOKEN) {
        tokens++;
        continue;
      }
      let pieceTokens = this.mergedCounts.get(piece);
      if (pieceTokens === undefined) {
        pieceTokens = this.mergeParts(this.pieceLength);
        this.rememberMerged(piece, pieceTokens);
      }
      tokens += pieceTokens;
    }
    return tokens;
  }

  /** The token ids of `text`. */
  encode(text: string): number[] {
    const pattern = this.restartSplit();
    const ids: number[] = [];
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const whole = this.wholeRank(match[0]);
      if (whole !== NOT_A_TOKEN) {
        ids.push(whole);
        continue;
      }
      const parts = this.mergeParts(this.pieceLength);
      for (let i = 0; i < parts; i++) ids.push(rankOf(this.table, this.piece, this.partStarts[i]!, this.partStarts[i + 1]!));
    }
    return ids;
  }

  private restartSplit(): RegExp {
    this.splitPattern.lastIndex = 0;
    return this.splitPattern;
  }

  /** The rank of `piece` when it is one token, else NOT_A_TOKEN; either way its UTF-8 bytes in `this.piece`. */
  private wholeRank(piece: string): number {
    this.pieceLength = this.encodeUtf8(piece);
    return rankOf(this.table, this.piece, 0, this.pieceLength);
  }

  /** Forgets the oldest remembered pieces when full: pieces that come back often stay. */
  private rememberMerged(piece: string, tokens: number): void {
    const cost = piece.length + ENTRY_COST;
    if (cost > REMEMBERED_COST) return;
    this.mergedCounts.set(piece, tokens);
    this.mergedCountsCost += cost;
    while (this.mergedCountsCost > REMEMBERED_COST) {
      const oldest = this.mergedCounts.keys().next().value!;
      this.mergedCounts.delete(oldest);
      this.mergedCountsCost -= oldest.length + ENTRY_COST;
    }
  }

  /** Writes `text` as UTF-8 into `this.piece`, a lone surrogate as U+FFFD (as TextEncoder does); the byte length. */
  private encodeUtf8(text: string): number {
    if (this.piece.length < text.length * 3) this.grow(text.length * 3);
    const bytes = this.piece;
    let length = 0;
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i);
      if (code < 0x80) {
        bytes[length++] = code;
        continue;
      }
      if (code < 0x800) {
        bytes[length++] = 0xc0 | (code >> 6);
        bytes[length++] = 0x80 | (code & 0x3f);
        continue;
      }
      if (code >= 0xd800 && code <= 0xdfff) {
        const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
        if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
          bytes[length++] = 0xf0 | (point >> 18);
          bytes[length++] = 0x80 | ((point >> 12) & 0x3f);
          bytes[length++] = 0x80 | ((point >> 6) & 0x3f);
          bytes[length++] = 0x80 | (point & 0x3f);
          i++;
          continue;
        }
        code = REPLACEMENT_CHARACTER;
      }
      bytes[length++] = 0xe0 | (code >> 12);
      bytes[length++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[length++] = 0x80 | (code & 0x3f);
    }
    return length;
  }

  private grow(bytes: number): void {
    this.piece = new Uint8Array(bytes);
    this.partStarts = new Int32Array(bytes + 1);
    this.partRanks = new Int32Array(bytes + 1);
  }

  private pairRank(from: number, to: number): number {
    const rank = rankOf(this.table, this.piece, from, to);
    return rank === NOT_A_TOKEN ? NO_MERGE : rank;
  }

  /** Merges the `length` bytes in `this.piece`; the parts left, their boundaries in `this.partStarts`. */
  private mergeParts(length: number): number {
    const starts = this.partStarts;
    const ranks = this.partRanks;
    for (let i = 0; i <= length; i++) starts[i] = i;
    for (let i = 0; i + 1 < length; i++) ranks[i] = this.pairRank(i, i + 2);
    let boundaries = length + 1;
    for (;;) {
      let lowest = NO_MERGE;
      let at = -1;
      for (let i = 0; i + 2 < boundaries; i++) {
        if (ranks[i]! < lowest) {
          lowest = ranks[i]!;
          at = i;
        }
      }
      if (at === -1) break;
      for (let i = at + 1; i + 1 < boundaries; i++) {
        starts[i] = starts[i + 1]!;
        ranks[i] = ranks[i + 1]!;
      }
      boundaries--;
      ranks[at] = at + 2 < boundaries ? this.pairRank(starts[at]!, starts[at + 2]!) : NO_MERGE;
      if (at > 0) ranks[at - 1] = this.pairRank(starts[at - 1]!, starts[at + 1]!);
    }
    return boundaries - 1;
  }
}
