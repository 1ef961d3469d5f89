import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A request recorded from a coding agent's released version, as it reached a server on 127.0.0.1. */
export interface AgentFixture {
  agent: 'claude-code' | 'codex';
  version: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const directory = path.join(path.dirname(fileURLToPath(import.meta.url)), '__fixtures__');

export function loadAgentFixture(name: string): AgentFixture {
  return JSON.parse(readFileSync(path.join(directory, `${name}.json`), 'utf8')) as AgentFixture;
}

/** Sends the fixture to the gateway as the agent would, with the model and key replaced. */
export async function replayFixture(baseUrl: string, fixture: AgentFixture, options: { model: string; key: string }): Promise<Response> {
  const headers: Record<string, string> = { ...fixture.headers, 'content-type': 'application/json' };
  if (fixture.agent === 'claude-code') headers['x-api-key'] = options.key;
  else headers.authorization = `Bearer ${options.key}`;
  return fetch(baseUrl + fixture.path, { method: fixture.method, headers, body: JSON.stringify({ ...fixture.body, model: options.model }) });
}

/** Server-sent events of a response body: `{ event, data }` with the data parsed as JSON. */
export async function readEvents(response: Response): Promise<Array<{ event: string | null; data: Record<string, unknown> }>> {
  const text = await response.text();
  const events: Array<{ event: string | null; data: Record<string, unknown> }> = [];
  for (const block of text.split(/\n\n+/)) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length === 0 || data.join('\n') === '[DONE]') continue;
    events.push({ event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
  }
  return events;
}
