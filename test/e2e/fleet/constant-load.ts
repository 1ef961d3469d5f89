/**
 * Constant load through the balancer for rolling restarts and upgrades: a few workers, each sending one chat request
 * after another, unary and streamed in turn, and recording every answer that is not a complete success.
 */

export interface LoadModels {
  /** Answered at once. */
  unary: string;
  /** Streamed over a second or so, so that some streams are in flight whenever an instance goes. */
  stream: string;
}

export interface LoadTally {
  /** One line per failed request: its status and body, a stream cut short, or a network error. */
  failures: string[];
  completed: number;
  streamsCompleted: number;
}

export interface ConstantLoad {
  /** Lets each worker finish its request in flight, then tallies. */
  stop(): Promise<LoadTally>;
}

export function startConstantLoad(apiUrl: string, key: string, models: LoadModels, workers = 6): ConstantLoad {
  const tally: LoadTally = { failures: [], completed: 0, streamsCompleted: 0 };
  let running = true;

  async function oneRequest(stream: boolean): Promise<void> {
    try {
      const response = await fetch(`${apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: stream ? models.stream : models.unary, stream, max_tokens: 16, messages: [{ role: 'user', content: 'keep going' }] }),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await response.text();
      if (response.status !== 200) tally.failures.push(`${response.status} ${text.slice(0, 200)}`);
      else if (stream && !text.includes('data: [DONE]')) tally.failures.push(`stream cut: ${text.slice(-200)}`);
      else {
        tally.completed += 1;
        if (stream) tally.streamsCompleted += 1;
      }
    } catch (error) {
      tally.failures.push(`network: ${String(error)}`);
    }
  }

  const done = Promise.all(Array.from({ length: workers }, async (_unused, worker) => {
    for (let round = 0; running && round < 10_000; round += 1) await oneRequest((round + worker) % 2 === 0);
  }));
  return {
    async stop() {
      running = false;
      await done;
      return tally;
    },
  };
}
