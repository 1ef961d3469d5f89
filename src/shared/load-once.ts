/**
 * A module (or anything costly) loaded at its first use rather than at start: `get` starts the load once and every
 * caller shares it; a failed load is forgotten, so the next use tries again. `loaded` answers synchronously with
 * what has been loaded so far (null before), for checks that only matter once the module is in use, such as
 * recognising its error classes.
 */
export interface LoadOnce<T> {
  get(): Promise<T>;
  loaded(): T | null;
}

export function loadOnce<T>(load: () => Promise<T>): LoadOnce<T> {
  let pending: Promise<T> | null = null;
  let value: T | null = null;
  return {
    get: () => {
      pending ??= load().then((loadedValue) => {
        value = loadedValue;
        return loadedValue;
      }, (error: unknown) => {
        pending = null;
        throw error;
      });
      return pending;
    },
    loaded: () => value,
  };
}
