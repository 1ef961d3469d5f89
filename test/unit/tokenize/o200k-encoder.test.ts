import fc from 'fast-check';
import { countTokens as referenceCount, encode as referenceEncode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { loadO200kEncoder } from '../../../src/tokenize/o200k-encoder.js';
import { countTextTokensLocally } from '../../../src/tokenize/count-tokens-locally.js';

const CORPUS: Record<string, string> = {
  english: 'The quick brown fox jumps over the lazy dog. It was the best of times, it was the worst of times.',
  contractions: "I'm sure it's fine: they're here, we'll go, you've seen, he'd know, don't. IT'S LOUD, THEY'RE HERE, WE'LL SEE, Ma'am's.",
  mixedCase: 'camelCaseWord PascalCase HTTPServerError XMLHttpRequest iPhone eBay McDonald ALLCAPS mIxEd',
  code: 'export async function fetchUser(id: string): Promise<User> {\n  const res = await fetch(`/api/users/${id}`);\n  if (!res.ok) throw new Error(res.statusText);\n  return (await res.json()) as User;\n}\n',
  python: 'def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n\nprint([fib(i) for i in range(10)])  # comment\r\n',
  json: '{"id": "chatcmpl-123", "object": "chat.completion", "created": 1677652288, "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "logprobs": null}], "usage": {"prompt_tokens": 9, "total": 12.5e-3}}',
  chinese: '我们的网关在本地计算令牌数量，用于没有自己计数器的上游服务。今天天气很好！',
  japanese: '日本語のテキストです。カタカナとひらがな、そして漢字が混ざっています。',
  korean: '안녕하세요, 세계! 토큰을 세는 중입니다.',
  emoji: 'Great job 👍🎉! Family: 👨‍👩‍👧‍👦 flag: 🏳️‍🌈 🇫🇷 skin tones: 👋🏽👋🏿 keycap: 1️⃣ heart: ❤️‍🔥',
  arabic: 'مرحبا بالعالم، هذا نص عربي للاختبار. كيف حالك اليوم؟',
  hindi: 'नमस्ते दुनिया, यह एक परीक्षण पाठ है। आप कैसे हैं?',
  numbers: '3.14159265358979 1,000,000 2024-11-26 0x1F 1e10 -42 12345678901234567890 ٣٤٥ ⅔ ²',
  whitespace: `a${' '.repeat(40)}b\n\n\n\t\t\tc   \r\n   \n${' '.repeat(17)}\u00a0\u2003\u3000d${' '.repeat(9)}`,
  punctuation: '...!!! ??? --- ___ *** ### /// \\\\ ||| ~~~ ``` <<< >>> ((( ))) [[[ ]]] {{{ }}} @@@ $$$ %%% ^^^ &&& === +++',
  url: 'See https://example.com/path/to/resource?query=a%20b&x=1#frag or mail user.name+tag@example.co.uk.',
  accents: 'Café naïve résumé façade Ångström Zürich São Paulo Øresund Đorđe crème brûlée',
  combining: 'e\u0301 a\u0308 n\u0303 Z\u0351\u0352\u0353 \u0915\u094d\u0937',
  controls: 'tab\there\u0000nul\u0007bell\u001b[31mred\u001b[0m\u200bzero-width\u2060joiner',
  loneSurrogates: 'a\ud800b \udc00c \ud83d end \ud83d\ude00 ok',
  repeated: 'x'.repeat(300) + ' ' + 'ab'.repeat(150) + ' ' + '!'.repeat(77),
};

const TWENTY_KB = (() => {
  const entries = Object.values(CORPUS);
  let text = '';
  for (let i = 0; text.length < 20_000; i++) text += `${entries[i % entries.length]} ${i}\n`;
  return text;
})();

/** where gpt-tokenizer is wrong (see below) */
const BYTE_ORDER_MARK = '\ufeff';
const SPECIAL_TOKENS_AS_TEXT = { disallowedSpecial: new Set<string>() };

describe('the compact o200k encoder', () => {
  it('yields gpt-tokenizer ids and counts on a fixed corpus', async () => {
    const encoder = await loadO200kEncoder();
    for (const [name, text] of Object.entries({ ...CORPUS, twentyKb: TWENTY_KB })) {
      expect(encoder.encode(text), name).toEqual(referenceEncode(text));
      expect(encoder.count(text), name).toBe(referenceCount(text));
      expect(encoder.count(text), `${name}, counted again`).toBe(referenceCount(text));
    }
  });

  it('pins a few ids', async () => {
    const encoder = await loadO200kEncoder();
    expect(encoder.encode('hello world')).toEqual([24912, 2375]);
    expect(encoder.encode('')).toEqual([]);
    expect(encoder.count('')).toBe(0);
  });

  // gpt-tokenizer looks merged bytes up as decoded text, and its decoder drops a leading byte-order mark: it never
  // merges into a token that starts with U+FEFF. The rank file has them (EF BB BF is 5574), and so does tiktoken.
  it('merges into tokens that start with a byte-order mark, where gpt-tokenizer does not', async () => {
    const encoder = await loadO200kEncoder();
    expect(encoder.encode('\ufeffbom')).toEqual([5574, 146878]);
    expect(referenceEncode('\ufeffbom')).toEqual([5416, 123, 146878]);
  });

  it('counts special-token text as ordinary text instead of throwing', async () => {
    const encoder = await loadO200kEncoder();
    const text = 'before <|endoftext|> and <|im_start|>user<|im_sep|> after';
    expect(() => referenceCount(text)).toThrow();
    expect(encoder.encode(text)).toEqual(referenceEncode(text, SPECIAL_TOKENS_AS_TEXT));
    expect(await countTextTokensLocally(text)).toBe(referenceCount(text, SPECIAL_TOKENS_AS_TEXT));
  });

  it('keeps counting right once its counts of merged pieces overflow', async () => {
    const encoder = await loadO200kEncoder();
    const pieces = Array.from({ length: 6000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 0x5000), 0x4e00 + ((i * 104729) % 0x5000), 0x3400 + (i % 0x1000)));
    const text = pieces.join(' ');
    const expected = referenceCount(text);
    expect(encoder.count(text)).toBe(expected);
    expect(encoder.count(text)).toBe(expected);
  });

  it('loads once', async () => {
    const [first, second] = await Promise.all([loadO200kEncoder(), loadO200kEncoder()]);
    expect(second).toBe(first);
    expect(await loadO200kEncoder()).toBe(first);
  });

  it('agrees with gpt-tokenizer on any code points, lone surrogates included', async () => {
    const encoder = await loadO200kEncoder();
    const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((point) => String.fromCodePoint(point));
    fc.assert(
      fc.property(fc.string({ unit: anyCodePoint, maxLength: 120 }), (text) => {
        fc.pre(!text.includes(BYTE_ORDER_MARK));
        expect(encoder.encode(text)).toEqual(referenceEncode(text));
        expect(encoder.count(text)).toBe(referenceCount(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with gpt-tokenizer on grapheme clusters', async () => {
    const encoder = await loadO200kEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 120 }), (text) => {
        fc.pre(!text.includes(BYTE_ORDER_MARK));
        expect(encoder.count(text)).toBe(referenceCount(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with gpt-tokenizer on text drawn from words, numbers, whitespace and punctuation', async () => {
    const encoder = await loadO200kEncoder();
    const atoms = [
      'the', 'The', 'THE', 'token', 'Tokens', 'gateway', 'naïve', 'über', '東京', 'данные', 'مرحبا', 'नमस्ते', '😀', '👨‍👩‍👧',
      "'s", "'S", "'re", "'ll", "'ve", "'d", "'m", "'t", "n't", ' ', '  ', '   ', '\n', '\n\n', '\r\n', '\t', '.', ',', '!', '?',
      '...', '/', '//', '-', '_', '(', ')', '{', '}', '"', "'", '`', ':', ';', '=', '=>', '0', '7', '42', '1234', '3.14', '$',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...atoms), { maxLength: 60 }), (parts) => {
        const text = parts.join('');
        expect(encoder.encode(text)).toEqual(referenceEncode(text));
        expect(encoder.count(text)).toBe(referenceCount(text));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('countTextTokensLocally', () => {
  it('counts short text as gpt-tokenizer does', async () => {
    for (const text of Object.values(CORPUS)) if (text.length <= 500) expect(await countTextTokensLocally(text)).toBe(referenceCount(text));
  });

  it('counts long text in slices cut at spaces, each as gpt-tokenizer counts it', async () => {
    const words = TWENTY_KB.replace(/\s+/g, ' ');
    const cut = words.lastIndexOf(' ', 500);
    expect(await countTextTokensLocally(words.slice(0, 700))).toBe(referenceCount(words.slice(0, cut)) + referenceCount(words.slice(cut, 700)));
  });
});
