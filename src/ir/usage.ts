/** Token usage in one shape for every protocol. Counts are integers; absent details are 0. */
export interface Usage {
  input: {
    total: number;
    /** Input tokens billed at the full input price. */
    noCache: number;
    cacheRead: number;
    cacheWrite: number;
  };
  output: {
    total: number;
    text: number;
    reasoning: number;
  };
}

export function emptyUsage(): Usage {
  return { input: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
}

export function totalTokens(usage: Usage): number {
  return usage.input.total + usage.output.total;
}
