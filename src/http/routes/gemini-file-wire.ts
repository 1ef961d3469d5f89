import type { StoredFile } from '../../domain/files.js';

/** Gemini names files `files/{id}`; the id is the gateway's own file id. */
export const geminiFileName = (id: string): string => `files/${id}`;

/** The file id in `files/{id}` or a bare id. */
export const fileIdOf = (name: string): string => name.replace(/^files\//, '');

/** The API's own origin as the caller reached it, for `uri` and the upload URL. */
export function originOf(headers: Record<string, string | string[] | undefined>): string {
  const forwarded = headers['x-forwarded-proto'];
  const protocol = forwarded === 'https' ? 'https' : 'http';
  return `${protocol}://${String(headers.host ?? '127.0.0.1')}`;
}

/** A file as the Gemini API's `File` resource (`sizeBytes` an int64 string, times RFC 3339, `state` ACTIVE). */
export function geminiFileObject(file: StoredFile, origin: string): Record<string, unknown> {
  const created = new Date(file.createdAt).toISOString();
  return {
    name: geminiFileName(file.id),
    displayName: file.filename,
    mimeType: file.mimeType ?? (file.filename.endsWith('.jsonl') ? 'application/jsonl' : 'application/octet-stream'),
    sizeBytes: String(file.bytes),
    createTime: created,
    updateTime: created,
    ...(file.expiresAt === null ? {} : { expirationTime: new Date(file.expiresAt).toISOString() }),
    uri: `${origin}/v1beta/${geminiFileName(file.id)}`,
    downloadUri: `${origin}/v1beta/${geminiFileName(file.id)}:download?alt=media`,
    state: 'ACTIVE',
    source: file.purpose === 'batch_output' ? 'GENERATED' : 'UPLOADED',
  };
}
