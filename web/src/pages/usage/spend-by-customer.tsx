import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from 'recharts';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatCost, formatDay, formatInteger } from '../../format/format';
import { addUsd, sumUsd } from '../../format/usd-sum';
import { Alert, Loading } from '../../ui/feedback';
import { axisProps, ChartFigure, palette, tooltipProps } from './usage-charts';
import { filterQuery, type UsageFilters } from './usage-queries';

type Dimension = 'customers' | 'tags';

interface ReportTotal {
  customer?: string;
  tag?: string;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

interface ReportDay extends ReportTotal {
  date: string;
}

interface UsageReport {
  data: ReportDay[];
  totals: ReportTotal[];
}

/** The chart shows the dearest few values as their own series and sums the rest as "other". */
const CHART_SERIES = 5;

/**
 * One row per day with a spend column per value: the dearest five over the period (the totals come dearest first),
 * the rest summed as "other". The names are kept apart from the row's own keys by a prefix.
 */
function spendPerDay(report: UsageReport): { days: Record<string, number | string>[]; series: string[] } {
  const nameOf = (row: ReportTotal): string => row.customer ?? row.tag ?? '';
  const shown = report.totals.slice(0, CHART_SERIES).map(nameOf);
  const series = report.totals.length > CHART_SERIES ? [...shown, 'other'] : shown;
  const days = new Map<string, Record<string, number | string>>();
  for (const row of report.data) {
    const day = days.get(row.date) ?? { date: row.date };
    const name = shown.includes(nameOf(row)) ? nameOf(row) : 'other';
    day[`cost:${name}`] = addUsd(Number(day[`cost:${name}`] ?? 0), row.cost_usd);
    days.set(row.date, day);
  }
  return { days: [...days.values()].sort((a, b) => String(a.date).localeCompare(String(b.date))), series };
}

const LABELS: Record<Dimension, { heading: string; empty: string }> = {
  customers: { heading: 'Customer', empty: 'No request named an end customer in this period (user, metadata.user_id or x-gateway-customer).' },
  tags: { heading: 'Tag', empty: 'No request carried tags in this period (metadata or x-gateway-tags).' },
};

/** A request names one customer, so customers' spend adds up; it may carry several tags, so tags' spend does not. */
function chartSummary(dimension: Dimension, totals: ReportTotal[]): string {
  const rest = totals.length > CHART_SERIES ? ', the five dearest and the rest as other' : '';
  if (dimension === 'tags') return `By tag${rest}; a request with several tags counts in each.`;
  return `${formatCost(sumUsd(totals.map((total) => total.cost_usd)))} in total, by customer${rest}.`;
}

/**
 * The period's spend by end customer or by tag (from the daily rollups), dearest first, with its CSV per day. Spend
 * comes right after the name, so a phone shows it without scrolling the table.
 */
export function SpendByCustomer({ filters }: { filters: UsageFilters }) {
  const api = useApi();
  const [dimension, setDimension] = useState<Dimension>('customers');
  const range = filterQuery(filters);
  const report = useQuery({
    queryKey: ['usage-report', dimension, range.from, range.to],
    queryFn: () => api.get<UsageReport>(`/api/reports/${dimension}`, { from: range.from, to: range.to }),
  });
  const csv = new URLSearchParams({ format: 'csv' });
  if (range.from !== undefined) csv.set('from', range.from);
  if (range.to !== undefined) csv.set('to', range.to);
  const totals = report.data?.totals ?? [];
  const chart = report.data === undefined ? null : spendPerDay(report.data);
  const noun = dimension === 'customers' ? 'customer' : 'tag';
  return (
    <div className="stack">
      <div className="filter-actions" role="group" aria-label="Group spend by">
        {(['customers', 'tags'] as const).map((option) => (
          <button key={option} type="button" className={`button ${option === dimension ? 'button-primary' : 'button-secondary'}`} aria-pressed={option === dimension} onClick={() => setDimension(option)}>
            By {option === 'customers' ? 'customer' : 'tag'}
          </button>
        ))}
        <a className="button button-secondary" href={`/api/reports/${dimension}?${csv.toString()}`} download>Daily report (CSV)</a>
      </div>
      {report.isPending ? <Loading /> : null}
      {report.isError ? <Alert tone="error">{errorMessage(report.error)}</Alert> : null}
      {report.data !== undefined && totals.length === 0 ? <p className="empty">{LABELS[dimension].empty}</p> : null}
      {chart === null || totals.length === 0 ? null : (
        <div data-testid="spend-by-customer-chart" data-series={chart.series.length}>
          <ChartFigure title={`Spend per day by ${noun}`} summary={chartSummary(dimension, totals)}>
            <BarChart data={chart.days} accessibilityLayer>
              <CartesianGrid stroke="var(--border)" vertical={false} />
              <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} />
              <YAxis tickFormatter={(value: number) => formatCost(value)} width={72} {...axisProps} />
              <Tooltip {...tooltipProps} formatter={(value) => formatCost(Number(value))} />
              {/* Dearest first, "other" last: the series' own order, not alphabetical. */}
              <Legend itemSorter={null} />
              {chart.series.map((name, index) => <Bar key={name} dataKey={`cost:${name}`} name={name} stackId="cost" isAnimationActive={false} fill={palette[index % palette.length]} />)}
            </BarChart>
          </ChartFigure>
        </div>
      )}
      {totals.length === 0 ? null : (
        <div className="table-scroll">
          <table className="table table-cards" data-testid="spend-by-customer">
            <caption className="visually-hidden">Spend per {dimension === 'customers' ? 'end customer' : 'tag'} over the period, dearest first</caption>
            <thead>
              <tr>
                <th scope="col">{LABELS[dimension].heading}</th><th scope="col" className="numeric">Spend</th><th scope="col" className="numeric">Requests</th>
                <th scope="col" className="numeric">Tokens</th><th scope="col" className="numeric">Errors</th>
              </tr>
            </thead>
            <tbody>
              {totals.map((total) => {
                const name = total.customer ?? total.tag ?? '';
                return (
                  <tr key={name}>
                    <th scope="row" className="mono">{name}</th>
                    <td data-label="Spend" className="numeric">{formatCost(total.cost_usd)}</td>
                    <td data-label="Requests" className="numeric">{formatInteger(total.requests)}</td>
                    <td data-label="Tokens" className="numeric">{formatInteger(total.input_tokens + total.output_tokens)}</td>
                    <td data-label="Errors" className="numeric">{formatInteger(total.errors)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
