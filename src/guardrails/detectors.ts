/**
 * The built-in personal-data and secret detectors. Each finds spans of one kind in a text; a regular expression
 * proposes candidates and a validator (Luhn, mod-97, address parsing, checksum letters, entropy) keeps only the
 * real ones. Every pattern is bounded: a match is never longer than the detector's `maxLength`, which is what lets
 * the stream scanner hold back only a bounded window. `find(text, from)` reports spans starting at or after
 * `from`, reading the text before it only as context (a lookbehind), so a stream can be scanned piece by piece.
 */
import { cardBrand, ibanValid, IBAN_LENGTHS, ipv4Valid, ipv6Valid, luhnValid, shannonEntropy } from './validators.js';

export const PII_KINDS = ['email', 'phone', 'card', 'iban', 'national_id', 'ip_address', 'secret'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

/** A detected span of text: [start, end) in UTF-16 code units, and what it is. */
export interface Span {
  start: number;
  end: number;
  kind: string;
}

export interface Detector {
  /** the kind of the spans it finds: a PII kind, or `deny_list` */
  kind: string;
  /** no span it finds is longer than this */
  maxLength: number;
  find(text: string, from?: number): Span[];
}

/** Runs a global regular expression from `from`, keeping the matches `accept` returns a span for. */
function scan(pattern: RegExp, text: string, from: number, accept: (match: RegExpExecArray) => Span | undefined): Span[] {
  const spans: Span[] = [];
  // the module's own global expression, reused: scanning is synchronous, so no other scan can move lastIndex
  const re = pattern;
  re.lastIndex = from;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const span = accept(m);
    if (span) spans.push(span);
    if (m[0].length === 0) re.lastIndex++;
  }
  re.lastIndex = 0;
  return spans;
}

const EMAIL = /[A-Za-z0-9._%+-](?<![A-Za-z0-9._%+-].)[A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,4}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;
export const emailDetector: Detector = {
  kind: 'email',
  maxLength: 64 + 1 + 64 * 5 + 1 + 24,
  find: (text, from = 0) =>
    text.indexOf('@', from) < 0 ? [] : scan(EMAIL, text, from, (m) => {
      const local = m[0].slice(0, m[0].indexOf('@'));
      if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return undefined;
      return { start: m.index, end: m.index + m[0].length, kind: 'email' };
    }),
};

// International (+CC …) numbers of 8-15 digits, or national ones of 10-11 digits written in groups or as
// (area) groups. Dots as separators are left out: dotted digit groups are versions and addresses far more often.
const PHONE = /(?<![\w+.\-/])(?:\+\d{1,3}[ -]?)?(?:\(\d{1,4}\)[ -]?)?\d{2,4}(?:[ -]\d{2,4}){1,5}(?![\w.\-/]?\d)(?!\w)/g;
export const phoneDetector: Detector = {
  kind: 'phone',
  maxLength: 40,
  find: (text, from = 0) =>
    scan(PHONE, text, from, (m) => {
      const raw = m[0];
      const digits = raw.replace(/\D/g, '');
      const international = raw.startsWith('+');
      const grouped = /[ -]/.test(raw) || raw.includes('(');
      if (!grouped) return undefined;
      if (international ? digits.length < 8 || digits.length > 15 : digits.length < 10 || digits.length > 11) return undefined;
      // ISO dates (2024-01-15), first or after another number ("rows 10 2024-01-15"), are not numbers to call
      if (/(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)/.test(raw)) return undefined;
      return { start: m.index, end: m.index + raw.length, kind: 'phone' };
    }),
};

// Not inside a word or a hex token (a UUID's digit groups): letters may not touch the number.
const CARD = /(?<![\w-])\d(?:[ -]?\d){11,18}(?![\d-]?\d)(?![A-Za-z_])/g;
export const cardDetector: Detector = {
  kind: 'card',
  maxLength: 19 + 18,
  find: (text, from = 0) =>
    scan(CARD, text, from, (m) => {
      const raw = m[0];
      // one separator style throughout (4111 1111 1111 1111 or 4111-1111-…), not a mix
      if (raw.includes(' ') && raw.includes('-')) return undefined;
      const digits = raw.replace(/[ -]/g, '');
      if (!luhnValid(digits) || cardBrand(digits) === undefined) return undefined;
      return { start: m.index, end: m.index + raw.length, kind: 'card' };
    }),
};

const IBAN_START = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?=[ ]?[A-Z0-9])/g;
export const ibanDetector: Detector = {
  kind: 'iban',
  maxLength: 34 + 9,
  find: (text, from = 0) =>
    scan(IBAN_START, text, from, (m) => {
      const length = IBAN_LENGTHS[m[0].slice(0, 2)];
      if (length === undefined) return undefined;
      // read the IBAN's characters, allowing single spaces between them (printed in groups of four)
      let compact = m[0];
      let i = m.index + 4;
      while (compact.length < length && i < text.length) {
        const c = text.charCodeAt(i);
        if (c === 32 && i + 1 < text.length && isUpperAlnum(text.charCodeAt(i + 1))) {
          i++;
          continue;
        }
        if (!isUpperAlnum(c)) break;
        compact += text[i];
        i++;
      }
      if (compact.length !== length || (i < text.length && isAlnum(text.charCodeAt(i)))) return undefined;
      if (!ibanValid(compact)) return undefined;
      return { start: m.index, end: i, kind: 'iban' };
    }),
};

function isUpperAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
}
function isAlnum(c: number): boolean {
  return isUpperAlnum(c) || (c >= 97 && c <= 122);
}

const SSN = /(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-])/g;
const NINO = /(?<![\w])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![\w])/g;
const DNI = /(?<![\w-])(\d{8})-?([TRWAGMYFPDXBNJZSQVHLCKE])(?![\w-])/g;
const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
/** National identifiers: US social security numbers, UK national insurance numbers, Spanish DNI (checksum letter). */
export const nationalIdDetector: Detector = {
  kind: 'national_id',
  maxLength: 13,
  find: (text, from = 0) => {
    const spans = [
      ...scan(SSN, text, from, (m) => {
        const [, area = '', group = '', serial = ''] = m;
        if (area === '000' || area === '666' || area.startsWith('9') || group === '00' || serial === '0000') return undefined;
        return { start: m.index, end: m.index + m[0].length, kind: 'national_id' };
      }),
      ...scan(NINO, text, from, (m) => {
        if (['BG', 'GB', 'NK', 'KN', 'TN', 'NT', 'ZZ'].includes(m[1] ?? '')) return undefined;
        return { start: m.index, end: m.index + m[0].length, kind: 'national_id' };
      }),
      ...scan(DNI, text, from, (m) => {
        if (DNI_LETTERS[Number(m[1]) % 23] !== m[2]) return undefined;
        return { start: m.index, end: m.index + m[0].length, kind: 'national_id' };
      }),
    ];
    return spans.sort((a, b) => a.start - b.start);
  },
};

const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)/g;
// the first character is matched before the look-behind: most positions then fail at once
const IPV6 = /[0-9A-Fa-f:](?<![\w:.][0-9A-Fa-f:])[0-9A-Fa-f]{0,3}:(?:[0-9A-Fa-f]{0,4}:){1,6}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])/g;
export const ipAddressDetector: Detector = {
  kind: 'ip_address',
  maxLength: 45,
  find: (text, from = 0) => {
    const spans = [
      ...scan(IPV4, text, from, (m) => (ipv4Valid(m[0]) ? { start: m.index, end: m.index + m[0].length, kind: 'ip_address' } : undefined)),
      ...(text.indexOf(':', from) < 0 ? [] : scan(IPV6, text, from, (m) =>
        // at least one hex digit: a bare "::" in prose or code is punctuation
        /[0-9A-Fa-f]/.test(m[0]) && ipv6Valid(m[0]) ? { start: m.index, end: m.index + m[0].length, kind: 'ip_address' } : undefined,
      )),
    ];
    return spans.sort((a, b) => a.start - b.start);
  },
};

/** API keys by the prefixes their issuers give them. */
const SECRET_PREFIXED = new RegExp(
  // the boundary before a key is checked on each match (a look-behind here would run at every position)
  '(?:' +
    [
      'sk-ant-[A-Za-z0-9_-]{20,200}',
      'sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}',
      '(?:AKIA|ASIA)[0-9A-Z]{16}',
      'gh[pousr]_[A-Za-z0-9]{36,251}',
      'github_pat_[A-Za-z0-9_]{22,240}',
      'gl(?:pat|dt|ptt)-[A-Za-z0-9_-]{20,100}',
      'xox[abposr]-[A-Za-z0-9-]{10,200}',
      'AIza[0-9A-Za-z_-]{35}',
      '(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,200}',
      'hf_[A-Za-z0-9]{30,100}',
      'npm_[A-Za-z0-9]{36}',
      'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}',
    ].join('|') +
    ')(?![A-Za-z0-9_-])',
  'g',
);
/** Long tokens mixing upper case, lower case and digits with high entropy: keys of unknown issuers. */
/** Whole runs of token characters of 32 or more (first character before the look-behind: most positions fail at once). */
const SECRET_TOKEN = /[A-Za-z0-9+/_=-](?<![A-Za-z0-9+/_=-].)[A-Za-z0-9+/_=-]{31,}/g;
const KEY_CHAR = /[A-Za-z0-9_-]/;
/** Substrings one of the prefixed keys must contain: a text with none of them skips that expression. */
const SECRET_HINTS = ['sk-', 'AKIA', 'ASIA', 'ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_', 'glpat-', 'gldt-', 'glptt-', 'xox', 'AIza', '_live_', '_test_', 'hf_', 'npm_', 'SG.'];
const ENTROPY_BITS_PER_CHAR = 4.2;
export const secretDetector: Detector = {
  kind: 'secret',
  maxLength: 260,
  find: (text, from = 0) => {
    const hinted = SECRET_HINTS.some((hint) => text.includes(hint, from));
    const prefixed = hinted
      ? scan(SECRET_PREFIXED, text, from, (m) =>
          m.index > 0 && KEY_CHAR.test(text[m.index - 1] ?? '') ? undefined : { start: m.index, end: m.index + m[0].length, kind: 'secret' },
        )
      : [];
    const tokens = scan(SECRET_TOKEN, text, from, (m) => {
      const token = m[0];
      if (token.length < 32 || token.length > 200) return undefined;
      if (!/[A-Z]/.test(token) || !/[a-z]/.test(token) || !/\d/.test(token)) return undefined;
      if (shannonEntropy(token) < ENTROPY_BITS_PER_CHAR) return undefined;
      return { start: m.index, end: m.index + token.length, kind: 'secret' };
    });
    return [...prefixed, ...tokens].sort((a, b) => a.start - b.start || b.end - a.end);
  },
};

/** In the order overlapping spans are preferred: a card or IBAN beats the phone number its digits also resemble. */
export const BUILT_IN_DETECTORS: Readonly<Record<PiiKind, Detector>> = {
  secret: secretDetector,
  card: cardDetector,
  iban: ibanDetector,
  email: emailDetector,
  national_id: nationalIdDetector,
  ip_address: ipAddressDetector,
  phone: phoneDetector,
};

const PRIORITY = new Map<string, number>(Object.keys(BUILT_IN_DETECTORS).map((kind, i) => [kind, i]));

/**
 * One span per stretch of text, chosen left to right: the earliest start wins, then the longest, then the
 * detector listed first. Left to right is what keeps the choice the same when a stream is scanned in pieces.
 */
export function resolveOverlaps(spans: Span[]): Span[] {
  const sorted = [...spans].sort(
    (a, b) => a.start - b.start || b.end - a.end || (PRIORITY.get(a.kind) ?? 99) - (PRIORITY.get(b.kind) ?? 99),
  );
  const chosen: Span[] = [];
  let end = -1;
  for (const span of sorted) {
    if (span.start >= end) {
      chosen.push(span);
      end = span.end;
    }
  }
  return chosen;
}

/** All spans the given detectors find, overlaps resolved. */
export function detect(text: string, detectors: readonly Detector[], from = 0): Span[] {
  const spans: Span[] = [];
  for (const detector of detectors) for (const span of detector.find(text, from)) spans.push(span);
  return resolveOverlaps(spans);
}
