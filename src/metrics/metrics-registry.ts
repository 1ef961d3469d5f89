/**
 * A small Prometheus registry (text exposition format 0.0.4), no dependency. Label values are looked up through
 * nested maps, one level per label, so recording a sample builds no string: `labels(a, b).inc()` is a few map
 * lookups, and callers that know their labels up front keep the returned series.
 */

export type LabelValue = string | number;

interface Metric {
  render(lines: string[]): void;
}

/** Label values → series, one map level per label. */
class SeriesTree<Series> {
  readonly #root = new Map<LabelValue, unknown>();
  readonly #all: Array<{ values: readonly LabelValue[]; series: Series }> = [];

  constructor(
    private readonly arity: number,
    private readonly create: () => Series,
  ) {}

  get(values: readonly LabelValue[]): Series {
    if (values.length !== this.arity) throw new Error(`expected ${this.arity} label values, got ${values.length}`);
    if (this.arity === 0) return this.#single();
    let level = this.#root;
    for (let index = 0; index < values.length - 1; index += 1) {
      const value = values[index] as LabelValue;
      let next = level.get(value) as Map<LabelValue, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map()));
      level = next;
    }
    const last = values[values.length - 1] as LabelValue;
    let series = level.get(last) as Series | undefined;
    if (series === undefined) {
      series = this.create();
      level.set(last, series);
      this.#all.push({ values: [...values], series });
    }
    return series;
  }

  entries(): ReadonlyArray<{ values: readonly LabelValue[]; series: Series }> {
    return this.#all;
  }

  #single(): Series {
    const first = this.#all[0];
    if (first !== undefined) return first.series;
    const series = this.create();
    this.#all.push({ values: [], series });
    return series;
  }
}

function escapeLabel(value: LabelValue): string {
  return String(value).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(names: readonly string[], values: readonly LabelValue[], extra?: string): string {
  const parts = names.map((name, index) => `${name}="${escapeLabel(values[index] as LabelValue)}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function header(lines: string[], name: string, help: string, type: string): void {
  lines.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${type}`);
}

export class CounterSeries {
  value = 0;
  inc(amount = 1): void {
    this.value += amount;
  }
}

/** A counter or a gauge: one number a series. */
class ValueMetric<Series extends { value: number }> implements Metric {
  readonly #series: SeriesTree<Series>;

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly type: 'counter' | 'gauge',
    create: () => Series,
  ) {
    this.#series = new SeriesTree(labelNames.length, create);
  }

  labels(...values: LabelValue[]): Series {
    return this.#series.get(values);
  }

  /** Every series recorded so far with its label values (in the order of the label names). */
  entries(): ReadonlyArray<{ values: readonly LabelValue[]; series: Series }> {
    return this.#series.entries();
  }

  render(lines: string[]): void {
    header(lines, this.name, this.help, this.type);
    for (const { values, series } of this.#series.entries()) lines.push(`${this.name}${labelText(this.labelNames, values)} ${formatNumber(series.value)}`);
  }
}

export class Counter extends ValueMetric<CounterSeries> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, 'counter', () => new CounterSeries());
  }
}

export class GaugeSeries {
  value = 0;
  set(value: number): void {
    this.value = value;
  }
  inc(amount = 1): void {
    this.value += amount;
  }
  dec(amount = 1): void {
    this.value -= amount;
  }
}

export class Gauge extends ValueMetric<GaugeSeries> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, 'gauge', () => new GaugeSeries());
  }
}

export class HistogramSeries {
  /** Per-bucket (not cumulative) counts; the last slot is +Inf. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Records `value` once, or `times` times. */
  observe(value: number, times = 1): void {
    const bounds = this.bounds;
    let index = 0;
    while (index < bounds.length && value > (bounds[index] as number)) index += 1;
    this.counts[index] = (this.counts[index] as number) + times;
    this.sum += value * times;
    this.count += times;
  }
}

export class Histogram implements Metric {
  readonly #series: SeriesTree<HistogramSeries>;
  readonly #bucketLabels: string[];

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    for (let index = 1; index < bounds.length; index += 1) {
      if ((bounds[index] as number) <= (bounds[index - 1] as number)) throw new Error(`${name}: bucket bounds must increase`);
    }
    this.#series = new SeriesTree(labelNames.length, () => new HistogramSeries(bounds));
    this.#bucketLabels = [...bounds.map((bound) => `le="${formatNumber(bound)}"`), 'le="+Inf"'];
  }

  labels(...values: LabelValue[]): HistogramSeries {
    return this.#series.get(values);
  }

  /** Every series recorded so far with its label values (in the order of the label names). */
  entries(): ReadonlyArray<{ values: readonly LabelValue[]; series: HistogramSeries }> {
    return this.#series.entries();
  }

  /** The upper bounds of the buckets (the last bucket, +Inf, is implied). */
  bucketBounds(): readonly number[] {
    return this.bounds;
  }

  render(lines: string[]): void {
    header(lines, this.name, this.help, 'histogram');
    for (const { values, series } of this.#series.entries()) {
      let cumulative = 0;
      series.counts.forEach((count, index) => {
        cumulative += count;
        lines.push(`${this.name}_bucket${labelText(this.labelNames, values, this.#bucketLabels[index])} ${cumulative}`);
      });
      const labels = labelText(this.labelNames, values);
      lines.push(`${this.name}_sum${labels} ${formatNumber(series.sum)}`, `${this.name}_count${labels} ${series.count}`);
    }
  }
}

/** A gauge computed when scraped (e.g. breaker states), from a function returning its current samples. */
export class CollectedGauge implements Metric {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly collect: () => Iterable<{ labels: readonly LabelValue[]; value: number }>,
  ) {}

  render(lines: string[]): void {
    header(lines, this.name, this.help, 'gauge');
    for (const sample of this.collect()) lines.push(`${this.name}${labelText(this.labelNames, sample.labels)} ${formatNumber(sample.value)}`);
  }
}

export class MetricsRegistry {
  readonly #metrics: Metric[] = [];
  readonly #names = new Set<string>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(name, new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#add(name, new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]): Histogram {
    return this.#add(name, new Histogram(name, help, labelNames, bounds));
  }

  collected(name: string, help: string, labelNames: readonly string[], collect: () => Iterable<{ labels: readonly LabelValue[]; value: number }>): CollectedGauge {
    return this.#add(name, new CollectedGauge(name, help, labelNames, collect));
  }

  /** The whole registry in the text exposition format. */
  render(): string {
    const lines: string[] = [];
    for (const metric of this.#metrics) metric.render(lines);
    return `${lines.join('\n')}\n`;
  }

  #add<M extends Metric>(name: string, metric: M): M {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`invalid metric name ${name}`);
    if (this.#names.has(name)) throw new Error(`metric ${name} registered twice`);
    this.#names.add(name);
    this.#metrics.push(metric);
    return metric;
  }
}
