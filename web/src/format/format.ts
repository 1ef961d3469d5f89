/** Every amount, count and date the console shows is formatted here, so the pages agree. */

// Money is always cut toward zero, so no amount shows more than there is. Balances and caps show whole cents (the
// server's mails use the same rule, src/billing/money-text.ts), a non-zero one below a cent six decimals; costs and
// spend below a dollar show up to six decimals, so a request's cost reads the same as the parts it is made of.
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2, roundingMode: 'trunc' });
const usdPrecise = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6, roundingMode: 'trunc' });
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });
const dateTime = new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const dateOnly = new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', day: 'numeric' });
const shortDay = new Intl.DateTimeFormat('en-GB', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** Balances and caps: cents. */
export function formatUsd(value: number | null | undefined): string {
  return value == null ? '—' : usd.format(value);
}

/** Costs and spend: a request's cost is often a few cents and fractions of one ($0.0253), so below a dollar up to six decimals. */
export function formatCost(value: number | null | undefined): string {
  if (value == null) return '—';
  return Math.abs(value) < 1 ? usdPrecise.format(value) : usd.format(value);
}

export function formatInteger(value: number | null | undefined): string {
  return value == null ? '—' : integer.format(value);
}

export function formatCompact(value: number): string {
  return compact.format(value);
}

export function formatPercent(fraction: number): string {
  return percent.format(fraction);
}

export function formatDateTime(iso: string | null | undefined): string {
  if (iso == null) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : dateTime.format(date);
}

export function formatDate(iso: string | null | undefined): string {
  if (iso == null) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : dateOnly.format(date);
}

/** A chart axis label for a `YYYY-MM-DD` day (a UTC day). */
export function formatDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? day : shortDay.format(date);
}

export function formatMilliseconds(value: number | null | undefined): string {
  if (value == null) return '—';
  return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(2)} s`;
}

/** `YYYY-MM-DD` of a Date in UTC (the usage API's day boundaries). */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** A `<input type="datetime-local">` value (local time) as an ISO instant; empty gives null. */
export function localInputToIso(value: string): string | null {
  if (value === '') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** An ISO instant as a `<input type="datetime-local">` value in local time. */
export function isoToLocalInput(iso: string | null): string {
  if (iso === null) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (part: number) => String(part).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A request's hosted tool calls and what they cost (`3 web searches · $0.03`), or null when it made none. */
export function formatHostedTools(row: { web_searches?: number; web_fetches?: number; file_searches?: number; hosted_tool_cost_usd?: number }): string | null {
  const calls = [
    [row.web_searches ?? 0, 'web search', 'web searches'],
    [row.web_fetches ?? 0, 'web fetch', 'web fetches'],
    [row.file_searches ?? 0, 'file search', 'file searches'],
  ] as const;
  const named = calls.filter(([count]) => count > 0).map(([count, one, many]) => `${integer.format(count)} ${count === 1 ? one : many}`);
  // Per-call prices are fractions of a cent (Google's $0.014, OpenAI's $0.025): never rounded to cents.
  return named.length === 0 ? null : `${named.join(', ')} · ${usdPrecise.format(row.hosted_tool_cost_usd ?? 0)}`;
}
