/**
 * Work created in this process for a background loop that otherwise finds it by polling the database: the code
 * that records the work signals its kind, and the loops of every gateway in the process listen, so new work starts
 * at once however long the idle loop's wait has grown. A signal may come before the transaction that records the
 * work commits; a listener that finds nothing then looks again after its base interval. Work recorded by another
 * process is found by that process's own signal or by the loops' maximum wait.
 */
/** `money`: a money transaction committed (balances, spend and quotas may have crossed an alert's threshold). */
export type WorkKind = 'batches' | 'webhooks' | 'money';

const listeners = new Map<WorkKind, Set<() => void>>();

export function signalWork(kind: WorkKind): void {
  for (const listener of listeners.get(kind) ?? []) listener();
}

/** Calls `listener` on every signal of `kind`; returns the unsubscribe. */
export function onWork(kind: WorkKind, listener: () => void): () => void {
  const set = listeners.get(kind) ?? new Set<() => void>();
  listeners.set(kind, set);
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}
