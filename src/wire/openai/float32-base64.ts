/**
 * Embedding vectors as OpenAI's `encoding_format: "base64"` carries them: the little-endian IEEE-754 float32 bytes
 * of the vector, base64-encoded. Exact for values that are float32 already (every embedding is).
 */
export function float32ToBase64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let index = 0; index < vector.length; index += 1) bytes.writeFloatLE(vector[index] as number, index * 4);
  return bytes.toString('base64');
}

/** The inverse of float32ToBase64; null when the text is not a whole number of float32 values. */
export function base64ToFloat32(text: string): number[] | null {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) return null;
  const vector = new Array<number>(bytes.length / 4);
  for (let index = 0; index < vector.length; index += 1) vector[index] = bytes.readFloatLE(index * 4);
  return vector;
}
