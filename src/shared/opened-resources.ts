/**
 * What a start-up has opened so far (connections, timers, listening sockets), to close newest first when a later
 * step fails: a half-started process must neither hold a port nor stay alive on a pool with nothing listening.
 */
export class OpenedResources {
  readonly #closers: Array<() => unknown> = [];

  /** Registers how to close what was just opened. */
  add(close: () => unknown): void {
    this.#closers.push(close);
  }

  /** Closes everything registered, newest first; a closer that fails does not keep the others from running. */
  async closeAll(): Promise<void> {
    for (const close of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch {
        // The start already failed with the error worth reporting; this one would hide it.
      }
    }
  }
}
