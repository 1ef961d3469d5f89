import { describe, expect, it } from 'vitest';
import { NOT_A_TOKEN, rankOf } from '../../../src/tokenize/rank-table.js';
import { parseTiktokenFile } from '../../../src/tokenize/tiktoken-file.js';

const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text);
const line = (token: Uint8Array | string, rank: number): string => `${Buffer.from(typeof token === 'string' ? bytesOf(token) : token).toString('base64')} ${rank}\n`;

describe('parseTiktokenFile', () => {
  it('finds every token by its bytes, and nothing else', async () => {
    const tokens = ['a', 'b', 'ab', 'abc', ' the', '東京', '\u{1F600}'];
    const raw = new Uint8Array([0xff, 0x00, 0xe6]);
    const table = await parseTiktokenFile(bytesOf(tokens.map(line).join('') + line(raw, tokens.length)));
    tokens.forEach((token, rank) => {
      const key = bytesOf(token);
      expect(rankOf(table, key, 0, key.length)).toBe(rank);
    });
    expect(rankOf(table, raw, 0, raw.length)).toBe(tokens.length);
    const padded = bytesOf('xxabcxx');
    expect(rankOf(table, padded, 2, 5)).toBe(3);
    expect(rankOf(table, padded, 2, 4)).toBe(2);
    for (const missing of ['c', 'ba', 'abcd', 'the', '']) expect(rankOf(table, bytesOf(missing), 0, bytesOf(missing).length)).toBe(NOT_A_TOKEN);
  });

  it('reads unpadded base64, CRLF line ends and a last line without a newline', async () => {
    const table = await parseTiktokenFile(bytesOf('YQ 0\r\nYg 1\r\nYWI= 2'));
    expect(rankOf(table, bytesOf('ab'), 0, 2)).toBe(2);
    expect(table.starts.length).toBe(4);
  });

  it('refuses a file it would have to guess at', async () => {
    await expect(parseTiktokenFile(bytesOf('YQ== 0\nYg== 2\n'))).rejects.toThrow('rank 2 out of order on line 2');
    await expect(parseTiktokenFile(bytesOf('YQ== 0\nY*== 1\n'))).rejects.toThrow('outside base64 on line 2');
    await expect(parseTiktokenFile(bytesOf('YQ== 0\nYg==\n'))).rejects.toThrow('on line 2');
    await expect(parseTiktokenFile(bytesOf('YQ== 0\nYg== x\n'))).rejects.toThrow('not a number on line 2');
    await expect(parseTiktokenFile(bytesOf('YQ== 0\n 1\n'))).rejects.toThrow('empty token on line 2');
  });
});
