/**
 * Calls `each` on the items in order, at most `concurrency` at once; settles once every call started has. No call
 * starts once `signal` is aborted. A call that throws rejects the whole (the calls under way still run to their end).
 */
export async function forEachPooled<Item>(items: readonly Item[], concurrency: number, signal: AbortSignal, each: (item: Item) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) await each(items[next++] as Item);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
