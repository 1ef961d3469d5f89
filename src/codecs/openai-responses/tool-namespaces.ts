import { createHash } from 'node:crypto';
import { isJsonObject } from './wire-values.js';

/** A function tool inside a `namespace` tool, by its namespace and its own name. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/** Names every family takes (Anthropic: 1–128 of these characters; Gemini: at most 64). */
const PORTABLE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function portable(text: string, length: number): string {
  return text.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, length);
}

/**
 * The flat name a namespaced function has for an upstream without namespaces: `<namespace>__<name>` when that is
 * a portable name no other tool has, otherwise a shortened form made unique by a hash of both parts.
 */
function flatName(namespace: string, name: string, taken: ReadonlySet<string>): string {
  const plain = `${namespace}__${name}`;
  if (PORTABLE_NAME.test(plain) && !taken.has(plain)) return plain;
  const hash = createHash('sha256').update(`${namespace}\u0000${name}`).digest('hex').slice(0, 8);
  return `${portable(namespace, 16)}_${hash}__${portable(name, 36)}`;
}

/**
 * Codex groups client-run function tools in `{type: "namespace", name, tools: [...]}`. Upstreams other than OpenAI
 * take only flat function tools, so each member gets a flat name; the map turns flat names back into the namespace
 * and name on the answer's function_call items, and the other way for function_call items of earlier turns.
 */
export class ToolNamespaces {
  readonly #byFlat = new Map<string, NamespacedName>();
  readonly #byMember = new Map<string, string>();

  constructor(tools: unknown) {
    if (!Array.isArray(tools)) return;
    const taken = new Set<string>();
    for (const tool of tools) if (isJsonObject(tool) && tool.type === 'function' && typeof tool.name === 'string') taken.add(tool.name);
    for (const tool of tools) {
      if (!isJsonObject(tool) || tool.type !== 'namespace' || typeof tool.name !== 'string' || !Array.isArray(tool.tools)) continue;
      for (const member of tool.tools) {
        if (!isJsonObject(member) || typeof member.name !== 'string') continue;
        const flat = flatName(tool.name, member.name, taken);
        taken.add(flat);
        this.#byFlat.set(flat, { namespace: tool.name, name: member.name });
        this.#byMember.set(`${tool.name}\u0000${member.name}`, flat);
      }
    }
  }

  get size(): number {
    return this.#byFlat.size;
  }

  /** The flat name of a namespace member (also for a member no longer among the tools, by the same rule). */
  flat(namespace: string, name: string): string {
    return this.#byMember.get(`${namespace}\u0000${name}`) ?? flatName(namespace, name, new Set());
  }

  /** The namespace and name behind a flat name, or null for an ordinary tool. */
  member(flat: string): NamespacedName | null {
    return this.#byFlat.get(flat) ?? null;
  }
}
