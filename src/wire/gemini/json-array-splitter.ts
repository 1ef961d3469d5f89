type State = 'before-array' | 'between' | 'element' | 'done';

/**
 * Incremental splitter for the streamed JSON array Gemini sends without `alt=sse` (`[{…}\n,\r\n{…}\n]`): text goes
 * in at arbitrary boundaries (the caller decodes UTF-8 with a streaming decoder), the text of each complete
 * top-level element comes out. It tracks strings and escapes, so brackets and commas inside strings are inert, and
 * scans every character once.
 */
export class JsonArraySplitter {
  #buffer = '';
  #index = 0;
  #state: State = 'before-array';
  #elementStart = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;

  /** Complete elements of this piece of text (JSON text, not parsed). Throws if the body is not a JSON array. */
  push(text: string): string[] {
    this.#buffer += text;
    const elements: string[] = [];
    const buffer = this.#buffer;
    for (let index = this.#index; index < buffer.length; index += 1) {
      const char = buffer[index] as string;
      switch (this.#state) {
        case 'before-array':
          if (char === '[') this.#state = 'between';
          else if (!isWhitespace(char)) throw new SyntaxError(`expected a JSON array, found '${char}'`);
          break;
        case 'between':
          if (char === ']') this.#state = 'done';
          else if (char !== ',' && !isWhitespace(char)) {
            this.#state = 'element';
            this.#elementStart = index;
            this.#depth = 0;
            index -= 1;
          }
          break;
        case 'element': {
          const end = this.#scan(char, index);
          if (end !== null) {
            elements.push(buffer.slice(this.#elementStart, end));
            this.#state = 'between';
            if (end === index) index -= 1;
          }
          break;
        }
        case 'done':
          if (!isWhitespace(char)) throw new SyntaxError(`unexpected '${char}' after the end of the JSON array`);
          break;
      }
    }
    this.#compact(buffer);
    return elements;
  }

  /** True once the closing `]` was seen. */
  get complete(): boolean {
    return this.#state === 'done';
  }

  /**
   * Feeds one character of an element; returns the element's end (exclusive) when it ends here: after a closing
   * bracket at depth 0, or at the `,` / `]` / whitespace that ends a bare scalar (then the end is this index).
   */
  #scan(char: string, index: number): number | null {
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (char === '\\') this.#escaped = true;
      else if (char === '"') {
        this.#inString = false;
        if (this.#depth === 0) return index + 1;
      }
      return null;
    }
    if (char === '"') this.#inString = true;
    else if (char === '{' || char === '[') this.#depth += 1;
    else if (char === '}' || char === ']') {
      if (this.#depth === 0) return index;
      this.#depth -= 1;
      if (this.#depth === 0) return index + 1;
    } else if (this.#depth === 0 && (char === ',' || isWhitespace(char)) && index > this.#elementStart) return index;
    return null;
  }

  /** Drops what is consumed so the buffer holds at most the element in progress. */
  #compact(buffer: string): void {
    const keepFrom = this.#state === 'element' ? this.#elementStart : buffer.length;
    this.#buffer = buffer.slice(keepFrom);
    this.#index = buffer.length - keepFrom;
    this.#elementStart -= keepFrom;
  }
}

function isWhitespace(char: string): boolean {
  return char === ' ' || char === '\n' || char === '\r' || char === '\t';
}
