import type { ToolCallPart } from '../ir/message.js';

/** A tool call's arguments as texts a guardrail reads and may mask, and how the masked texts are written back. */
export interface ArgumentTexts {
  texts: { text: string }[];
  write: () => void;
}

/**
 * A tool call's arguments as texts the policies read: the strings of its JSON (the raw text when it is not JSON), so
 * masking replaces only inside strings; `write` puts the masked strings back (the arguments' own text is kept when
 * nothing changed).
 */
export function argumentTexts(part: ToolCallPart): ArgumentTexts {
  let root: unknown;
  try {
    root = JSON.parse(part.argumentsJson);
  } catch {
    const raw = { text: part.argumentsJson };
    return { texts: [raw], write: () => { part.argumentsJson = raw.text; } };
  }
  const slots: { text: string; original: string; put: (text: string) => void }[] = [];
  // Walked with a list rather than recursion: the model chooses how deep its arguments nest.
  const pending: { value: unknown; put: (text: string) => void }[] = [{ value: root, put: (text) => { root = text; } }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, put } = next;
    if (typeof value === 'string') slots.push({ text: value, original: value, put });
    else if (Array.isArray(value)) value.forEach((item, index) => pending.push({ value: item, put: (text) => { value[index] = text; } }));
    else if (value !== null && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      for (const [key, item] of Object.entries(object)) pending.push({ value: item, put: (text) => { object[key] = text; } });
    }
  }
  return {
    texts: slots,
    write: () => {
      if (slots.every((slot) => slot.text === slot.original)) return;
      for (const slot of slots) slot.put(slot.text);
      part.argumentsJson = JSON.stringify(root);
    },
  };
}
