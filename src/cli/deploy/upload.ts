import fs from 'node:fs';
import { Readable, Transform } from 'node:stream';

// Uploads the packed artifact to the presigned URL, streaming from disk, reporting progress as it goes.

export type Progress = (sent: number, total: number) => void;

export async function uploadArtifact(
  target: { uploadUrl: string; uploadHeaders: Record<string, string> },
  file: string,
  onProgress: Progress = () => {},
  fetchImpl: typeof fetch = fetch,
): Promise<void> {
  const total = fs.statSync(file).size;
  let sent = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      sent += chunk.length;
      onProgress(sent, total);
      cb(null, chunk);
    },
  });
  const body = Readable.toWeb(fs.createReadStream(file).pipe(counter)) as ReadableStream<Uint8Array>;
  const res = await fetchImpl(target.uploadUrl, {
    method: 'PUT',
    headers: { ...target.uploadHeaders, 'content-length': String(total) },
    body,
    duplex: 'half',
  } as RequestInit);
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON (an S3 XML error, say)
    }
    throw new Error(`The upload failed (HTTP ${res.status}): ${message}`);
  }
}

/** A one-line progress bar for a terminal: `[#####.....] 52% 1.3/2.5 MB`. */
export function progressBar(sent: number, total: number, width = 24): string {
  const ratio = total ? Math.min(1, sent / total) : 1;
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  return `${bar(ratio, width)} ${Math.round(ratio * 100)}% ${mb(sent)}/${mb(total)} MB`;
}

/** `[#####.....]` for a ratio between 0 and 1. */
export function bar(ratio: number, width = 24): string {
  const filled = Math.round(Math.min(1, Math.max(0, ratio)) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}
