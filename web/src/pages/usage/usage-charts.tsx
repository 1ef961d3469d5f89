import { Bar, BarChart, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { DailyUsage } from '../../api/types';
import { formatCompact, formatCost, formatDay, formatInteger, formatPercent } from '../../format/format';
import { addUsd } from '../../format/usd-sum';

export const palette = ['var(--chart-1)', 'var(--chart-2)', 'var(--chart-3)', 'var(--chart-4)', 'var(--chart-5)', 'var(--chart-6)'];

interface DayRow {
  date: string;
  requests: number;
  errors: number;
  errorRate: number;
  [series: string]: number | string;
}

/** One row per day with a spend and a token column per model (the top five by spend, the rest as "other"). */
function pivot(rows: DailyUsage[]): { days: DayRow[]; models: string[] } {
  // Requests refused before a model was known have none: one series of their own.
  const modelOf = (row: DailyUsage): string => row.model ?? '—';
  const spendByModel = new Map<string, number>();
  for (const row of rows) spendByModel.set(modelOf(row), (spendByModel.get(modelOf(row)) ?? 0) + row.cost_usd + (row.input_tokens + row.output_tokens) * 1e-12);
  const ranked = [...spendByModel.entries()].sort((a, b) => b[1] - a[1]).map(([model]) => model);
  const shown = ranked.slice(0, 5);
  const models = ranked.length > 5 ? [...shown, 'other'] : shown;
  const days = new Map<string, DayRow>();
  for (const row of rows) {
    const day = days.get(row.date) ?? { date: row.date, requests: 0, errors: 0, errorRate: 0 };
    const series = shown.includes(modelOf(row)) ? modelOf(row) : 'other';
    day[`cost:${series}`] = addUsd(Number(day[`cost:${series}`] ?? 0), row.cost_usd);
    day[`tokens:${series}`] = Number(day[`tokens:${series}`] ?? 0) + row.input_tokens + row.output_tokens;
    day.requests += row.requests;
    day.errors += row.errors;
    days.set(row.date, day);
  }
  const sorted = [...days.values()].sort((a, b) => a.date.localeCompare(b.date));
  for (const day of sorted) day.errorRate = day.requests === 0 ? 0 : day.errors / day.requests;
  return { days: sorted, models };
}

export function ChartFigure({ title, summary, children }: { title: string; summary: string; children: React.ReactElement }) {
  return (
    <figure className="chart">
      <figcaption><h2>{title}</h2><p className="field-hint">{summary}</p></figcaption>
      <div className="chart-area">
        <ResponsiveContainer width="100%" height={240}>{children}</ResponsiveContainer>
      </div>
    </figure>
  );
}

export const axisProps = { stroke: 'var(--text-muted)', fontSize: 12, tickLine: false } as const;
export const tooltipProps = { contentStyle: { background: 'var(--surface)', border: '1px solid var(--border)', borderRadius: 8, color: 'var(--text)' }, labelFormatter: (label: unknown) => formatDay(String(label)) } as const;

export function UsageCharts({ rows }: { rows: DailyUsage[] }) {
  const { days, models } = pivot(rows);
  const totals = rows.reduce((sum, row) => ({
    cost: addUsd(sum.cost, row.cost_usd), tokens: sum.tokens + row.input_tokens + row.output_tokens, requests: sum.requests + row.requests, errors: sum.errors + row.errors,
  }), { cost: 0, tokens: 0, requests: 0, errors: 0 });
  if (days.length === 0) return <p className="empty">No requests in this period yet.</p>;
  return (
    <div className="chart-grid" data-testid="usage-charts">
      <ChartFigure title="Spend per day" summary={`${formatCost(totals.cost)} in total, by model.`}>
        <BarChart data={days} accessibilityLayer>
          <CartesianGrid stroke="var(--border)" vertical={false} />
          <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} />
          <YAxis tickFormatter={(value: number) => formatCost(value)} width={72} {...axisProps} />
          <Tooltip {...tooltipProps} formatter={(value) => formatCost(Number(value))} />
          <Legend />
          {models.map((model, index) => <Bar key={model} dataKey={`cost:${model}`} name={model} stackId="cost" isAnimationActive={false} fill={palette[index % palette.length]} />)}
        </BarChart>
      </ChartFigure>
      <ChartFigure title="Tokens per day" summary={`${formatInteger(totals.tokens)} tokens in and out, by model.`}>
        <BarChart data={days} accessibilityLayer>
          <CartesianGrid stroke="var(--border)" vertical={false} />
          <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} />
          <YAxis tickFormatter={formatCompact} width={56} {...axisProps} />
          <Tooltip {...tooltipProps} formatter={(value) => formatInteger(Number(value))} />
          <Legend />
          {models.map((model, index) => <Bar key={model} dataKey={`tokens:${model}`} name={model} stackId="tokens" isAnimationActive={false} fill={palette[index % palette.length]} />)}
        </BarChart>
      </ChartFigure>
      <ChartFigure title="Requests and error rate" summary={`${formatInteger(totals.requests)} requests, ${formatPercent(totals.requests === 0 ? 0 : totals.errors / totals.requests)} failed.`}>
        <ComposedChart data={days} accessibilityLayer>
          <CartesianGrid stroke="var(--border)" vertical={false} />
          <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} />
          <YAxis yAxisId="requests" tickFormatter={formatCompact} width={48} {...axisProps} />
          <YAxis yAxisId="rate" orientation="right" tickFormatter={(value: number) => formatPercent(value)} domain={[0, 1]} width={48} {...axisProps} />
          <Tooltip {...tooltipProps} formatter={(value, name) => (name === 'Error rate' ? formatPercent(Number(value)) : formatInteger(Number(value)))} />
          <Legend />
          <Bar yAxisId="requests" dataKey="requests" name="Requests" fill="var(--chart-1)" isAnimationActive={false} />
          <Line yAxisId="rate" dataKey="errorRate" name="Error rate" stroke="var(--danger)" strokeWidth={2} dot={false} type="monotone" isAnimationActive={false} />
        </ComposedChart>
      </ChartFigure>
    </div>
  );
}
