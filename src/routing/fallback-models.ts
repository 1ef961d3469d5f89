/** The most models a chat request may name in its own fallback list, a model in its fallbacks, and a chain beyond its first model. */
export const MAX_FALLBACK_MODELS = 8;

/**
 * The names of the models a chat request may be answered by, in the order they are tried. The model it names
 * comes first. Then the caller's own list, when it gave one, exactly as given (it replaces the operator's
 * fallbacks); otherwise the model's fallbacks, then theirs, breadth first. A model already in the chain is not
 * added again (its identity is `idOf` of the name, so aliases of one model are one model), so a cycle among
 * fallbacks tries each model once. At most MAX_FALLBACK_MODELS follow the first. Names `idOf` does not know are
 * kept, for the caller to refuse or skip.
 */
export function fallbackModelNames(
  primary: string,
  requested: readonly string[] | null,
  fallbacksOf: (name: string) => readonly string[],
  idOf: (name: string) => string | undefined,
): string[] {
  const chain: string[] = [];
  const seen = new Set<string>();
  const add = (name: string): void => {
    const identity = idOf(name) ?? name;
    if (seen.has(identity) || chain.length > MAX_FALLBACK_MODELS) return;
    seen.add(identity);
    chain.push(name);
  };
  add(primary);
  if (requested !== null) {
    for (const name of requested) add(name);
    return chain;
  }
  for (let index = 0; index < chain.length && chain.length <= MAX_FALLBACK_MODELS; index += 1) {
    for (const name of fallbacksOf(chain[index] as string)) add(name);
  }
  return chain;
}
