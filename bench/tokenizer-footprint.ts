/**
 * What the o200k tokenizer costs: memory kept after loading it, the longest event-loop hold while it loads, and
 * tokens counted a second — gpt-tokenizer's own encoder against the compact one of src/tokenize.
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/tokenizer-footprint.js [rounds, default 3]
 *
 * Each measurement runs in a fresh `node --expose-gc` process, the two implementations interleaved round by round.
 * Memory (heap used + external, which includes array buffers) is read after a forced GC before loading, after loading
 * and counting one text, and after all the counting. Speed: a 100 KB mixed
 * text (prose, code, JSON, CJK, Arabic, emoji, numbers) and 1,000 texts of 200 characters, each counted in 500-character
 * slices as the gateway does, a first pass and then the best of three further passes.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { countInSlices } from '../src/tokenize/count-tokens-locally.js';
import { loadO200kEncoder } from '../src/tokenize/o200k-encoder.js';

type Implementation = 'gpt-tokenizer' | 'compact';
const IMPLEMENTATIONS: readonly Implementation[] = ['gpt-tokenizer', 'compact'];

interface Memory {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

interface Throughput {
  first: number;
  repeated: number;
  unseen: number;
}

interface Measurement {
  implementation: Implementation;
  before: Memory;
  after: Memory;
  /** after all the counting below, caches of pieces full */
  afterCounting: Memory;
  loadMs: number;
  longestHoldMs: number;
  /** of a 2,000-character text, right after loading (the split pattern is compiled on first use) */
  firstCountMs: number;
  longTextTokens: number;
  longText: Throughput;
  shortTexts: Throughput;
}

const REPEATED_PASSES = 3;

/** A small deterministic generator (mulberry32), so both implementations count the same texts. */
function randomSource(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you ' +
  'were her she there been one all would their we him has when who will more no if out so said what up its about ' +
  'into than them can only other new some could time these two may then first any like now my such make over our ' +
  'even most me state after also made many did must before back see through way where get much go well your know ' +
  'should down work year because come people just say each those take day good how long own too little use us very ' +
  'gateway token request stream upstream latency billing ledger invoice tenant quota retry timeout schema encoder'
).split(' ');
const ARABIC = 'مرحبا بالعالم هذا نص عربي قصير للاختبار والقياس'.split(' ');
const HINDI = 'नमस्ते दुनिया यह एक छोटा हिंदी पाठ है'.split(' ');
const EMOJI = ['👍', '🎉', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🚀', '😀', '❤️', '🇫🇷'];

function mixedText(characters: number, seed: number): string {
  const random = randomSource(seed);
  const pick = <T>(items: readonly T[]): T => items[random(items.length)]!;
  const identifier = (): string => pick(WORDS) + pick(WORDS).replace(/^./, (c) => c.toUpperCase());
  const kinds: (() => string)[] = [
    () => {
      const sentence = Array.from({ length: 6 + random(14) }, () => pick(WORDS)).join(' ');
      return `${sentence.replace(/^./, (c) => c.toUpperCase())}${pick(['.', '!', '?', ", it's", "; they're"])} `;
    },
    () => `function ${identifier()}(${identifier()}, ${identifier()}) {\n  return ${identifier()} + ${random(1000)};\n}\n`,
    () => `${JSON.stringify({ [identifier()]: random(100000), [identifier()]: [pick(WORDS), random(10) / 4], ok: random(2) === 1 })}\n`,
    () => Array.from({ length: 8 + random(20) }, () => String.fromCharCode(0x4e00 + random(0x5000))).join('') + '。',
    () => `${Array.from({ length: 5 + random(6) }, () => pick(ARABIC)).join(' ')} `,
    () => `${Array.from({ length: 5 + random(6) }, () => pick(HINDI)).join(' ')} `,
    () => `${pick(EMOJI)}${pick(EMOJI)} `,
    () => `${random(10 ** 9)}.${random(100)} ${'\n'.repeat(random(3))}${' '.repeat(random(12))}`,
  ];
  let text = '';
  while (text.length < characters) text += pick(kinds)();
  return text.slice(0, characters);
}

/** After a GC, a pause, and another: array buffers' memory is released by a task after the GC that found them dead. */
async function memory(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc?.();
  const { heapUsed, external, arrayBuffers, rss } = process.memoryUsage();
  return { heapUsed, external, arrayBuffers, rss };
}

async function loadCounter(implementation: Implementation): Promise<(text: string) => number> {
  if (implementation === 'gpt-tokenizer') {
    const encoding = await import('gpt-tokenizer/encoding/o200k_base');
    return (text) => encoding.countTokens(text);
  }
  const encoder = await loadO200kEncoder();
  return (text) => encoder.count(text);
}

function tokensPerSecond(texts: readonly string[], count: (text: string) => number): number {
  const started = performance.now();
  let tokens = 0;
  for (const text of texts) tokens += countInSlices(text, count);
  return tokens / ((performance.now() - started) / 1000);
}

/**
 * Tokens a second: the first pass through `texts`, the best of three more (the same texts again, as caches of
 * pieces seen see them), and the best of passes through each of `unseen`, texts of the same kind not counted before.
 */
function throughput(texts: readonly string[], unseen: readonly (readonly string[])[], count: (text: string) => number): Throughput {
  const first = tokensPerSecond(texts, count);
  let repeated = 0;
  for (let pass = 0; pass < REPEATED_PASSES; pass++) repeated = Math.max(repeated, tokensPerSecond(texts, count));
  return { first, repeated, unseen: Math.max(...unseen.map((fresh) => tokensPerSecond(fresh, count))) };
}

async function measure(implementation: Implementation): Promise<Measurement> {
  const [longText, ...unseenLongTexts] = [1, 2, 3, 4].map((seed) => [mixedText(100_000, seed)]) as [string[], ...string[][]];
  const [shortTexts, ...unseenShortTexts] = [1000, 3000, 5000, 7000].map((seed) => Array.from({ length: 1000 }, (_, i) => mixedText(200, seed + i))) as [string[], ...string[][]];
  const warmUp = mixedText(2_000, 7);
  const before = await memory();
  let longestHoldMs = 0;
  let last = performance.now();
  let loading = true;
  const tick = (): void => {
    if (!loading) return;
    const now = performance.now();
    longestHoldMs = Math.max(longestHoldMs, now - last);
    last = now;
    setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  const count = await loadCounter(implementation);
  const loadMs = performance.now() - started;
  longestHoldMs = Math.max(longestHoldMs, performance.now() - last);
  loading = false;
  const firstCountStarted = performance.now();
  countInSlices(warmUp, count);
  const firstCountMs = performance.now() - firstCountStarted;
  const after = await memory();
  const long = throughput(longText, unseenLongTexts, count);
  const short = throughput(shortTexts, unseenShortTexts, count);
  const afterCounting = await memory();
  return { implementation, before, after, afterCounting, loadMs, longestHoldMs, firstCountMs, longTextTokens: countInSlices(longText[0]!, count), longText: long, shortTexts: short };
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const rates = ({ first, repeated, unseen }: Throughput): string =>
  [first, repeated, unseen].map((perSecond) => `${(perSecond / 1000).toFixed(0)}k`).join('/');

function report(m: Measurement): string {
  const kept = (reading: Memory): string => mib(reading.heapUsed + reading.external - (m.before.heapUsed + m.before.external));
  return [
    m.implementation.padEnd(13),
    `kept ${kept(m.after)} MiB, ${kept(m.afterCounting)} after counting (heap ${mib(m.before.heapUsed)}→${mib(m.after.heapUsed)}, external ${mib(m.before.external)}→${mib(m.after.external)},`,
    `arrayBuffers ${mib(m.before.arrayBuffers)}→${mib(m.after.arrayBuffers)}, rss ${mib(m.before.rss)}→${mib(m.after.rss)})`,
    `load ${m.loadMs.toFixed(0)} ms, hold ${m.longestHoldMs.toFixed(0)} ms, first count ${m.firstCountMs.toFixed(0)} ms;`,
    `tokens/s first/repeated/unseen: 100 KB (${m.longTextTokens} tokens) ${rates(m.longText)}, 1000×200 ${rates(m.shortTexts)}`,
  ].join(' ');
}

const script = fileURLToPath(import.meta.url);
const [, , mode, which] = process.argv;
if (mode === '--measure' && (which === 'gpt-tokenizer' || which === 'compact')) {
  process.stdout.write(`${JSON.stringify(await measure(which))}\n`);
} else {
  const rounds = Math.min(Math.max(Number(mode ?? 3) || 3, 1), 20);
  for (let round = 1; round <= rounds; round++) {
    for (const implementation of IMPLEMENTATIONS) {
      const child = spawnSync(process.execPath, ['--expose-gc', script, '--measure', implementation], { encoding: 'utf8', timeout: 120_000 });
      if (child.status !== 0) throw new Error(`${implementation} failed: ${child.stderr}`);
      console.log(`round ${round} ${report(JSON.parse(child.stdout) as Measurement)}`);
    }
  }
}
