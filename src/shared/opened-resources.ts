/**
 * What the gateway has opened (connections, timers, listening sockets), in the order it opened them, to close
 * newest first: on shutdown, and when a later start-up step fails (a half-started process must neither hold a port
 * nor stay alive on a pool with nothing listening).
 */
export class OpenedResources {
  readonly #closers: Array<() => unknown> = [];

  /** Registers how to close what was just opened. */
  add(close: () => unknown): void {
    this.#closers.push(close);
  }

  /**
   * Closes everything registered, newest first. A closer that fails does not keep the others from running; the
   * first failure is thrown once all have run.
   */
  async closeAll(): Promise<void> {
    let failure: { error: unknown } | null = null;
    for (const close of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== null) throw failure.error;
  }
}
