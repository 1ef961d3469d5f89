/**
 * What the built-in guardrail detectors cost: microseconds to check a 2 KB prompt with every PII detector (email,
 * phone, card, IBAN, national id, IP address, secret) and mask what they find reversibly, for ordinary text (nothing
 * found, the common case) and for text with personal data in it; and the stream scanner over the same 2 KB answer
 * arriving in 20-character chunks. Runs in-process; part of `npm run bench` (after the load scenarios) and on its own:
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/guardrails.js
 *
 * Each case: a warm-up, then per-call timings; p50 and p99 of the calls. The budgets are what docs/guardrails.md
 * states: p50 ≤ 50 µs for an ordinary 2 KB prompt with all detectors, ≤ 100 µs when personal data is found and masked.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { BUILT_IN_DETECTORS } from '../src/guardrails/detectors.js';
import { MaskVault } from '../src/guardrails/masking.js';
import { GuardrailSet } from '../src/guardrails/policy.js';
import { guardrailInputSchema } from '../src/guardrails/settings.js';
import { StreamScanner } from '../src/guardrails/stream-scanner.js';


export interface GuardrailsCase {
  name: string;
  chars: number;
  p50Us: number;
  p99Us: number;
  /** the p50 it must stay under, when it has one */
  budgetP50Us?: number;
}

export interface GuardrailsBenchResult {
  cases: GuardrailsCase[];
  withinBudget: boolean;
}

const ORDINARY =
  'The quarterly report was published on 2024-03-15 and covers the period from January to March. Revenue grew by 12.5% ' +
  'compared with the same quarter last year, mostly because of the new subscription plans in version 3.2.1. ' +
  'function parseConfig(input) { const lines = input.split("\\n"); return lines.map((l) => l.trim()); } ' +
  '2024-11-02T14:23:11.482Z INFO server started on port 3000 (pid 48211), cache warmed: 12034 entries in 523 ms. ';
const PERSONAL =
  'Hi, I am Jane (jane.doe@example.com, +44 20 7946 0958). Please refund card 4111 1111 1111 1111 to IBAN ' +
  'DE89 3704 0044 0532 0130 00. My SSN is 123-45-6789, I logged in from 203.0.113.7 and my key is sk-proj-abcdEFGH1234ijklMNOP5678. ';

function twoKb(seed: string): string {
  let text = '';
  while (text.length < 2048) text += seed;
  return text.slice(0, 2048);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

function time(name: string, chars: number, iterations: number, budgetP50Us: number | undefined, run: () => void): GuardrailsCase {
  for (let i = 0; i < Math.min(2000, iterations); i++) run();
  const samples = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    run();
    samples[i] = Number(process.hrtime.bigint() - start) / 1000;
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return { name, chars, p50Us: percentile(sorted, 0.5), p99Us: percentile(sorted, 0.99), ...(budgetP50Us !== undefined ? { budgetP50Us } : {}) };
}

export function measureGuardrails(iterations = 5000): GuardrailsBenchResult {
  const set = new GuardrailSet([guardrailInputSchema.parse({ name: 'pii', kind: 'pii', mode: 'mask', applies_to: 'both', settings: { reversible: true } })]);
  const ordinary = twoKb(ORDINARY);
  const personal = twoKb(ORDINARY.slice(0, 600) + PERSONAL);
  const detectors = Object.values(BUILT_IN_DETECTORS);
  const cases = [
    time('2 KB prompt, ordinary text (nothing found)', ordinary.length, iterations, 50, () => set.evaluate('input', { text: ordinary }, new MaskVault())),
    time('2 KB prompt with personal data (masked reversibly)', personal.length, iterations, 100, () => set.evaluate('input', { text: personal }, new MaskVault())),
    time('2 KB streamed answer, 20-char chunks (stream scanner)', personal.length, Math.ceil(iterations / 5), undefined, () => {
      const scanner = new StreamScanner(detectors, true);
      for (let i = 0; i < personal.length; i += 20) scanner.push(personal.slice(i, i + 20));
      scanner.end();
    }),
  ];
  return { cases, withinBudget: cases.every((c) => c.budgetP50Us === undefined || c.p50Us <= c.budgetP50Us) };
}

export function formatGuardrails(result: GuardrailsBenchResult): string {
  const lines = ['Guardrails (all built-in PII detectors, in-process)'];
  for (const c of result.cases) {
    const budget = c.budgetP50Us !== undefined ? `   budget p50 ≤ ${c.budgetP50Us} µs` : '';
    lines.push(`  ${c.name.padEnd(56)} p50 ${c.p50Us.toFixed(1).padStart(7)} µs   p99 ${c.p99Us.toFixed(1).padStart(7)} µs${budget}`);
  }
  lines.push(`  within budget: ${result.withinBudget ? 'yes' : 'NO'}`);
  return lines.join('\n');
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) console.log(formatGuardrails(measureGuardrails()));
