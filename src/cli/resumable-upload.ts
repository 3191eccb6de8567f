import fsp from 'node:fs/promises';

// `pier cdn upload` for large files: a tus 1.0 upload (POST /v1/cdn/upload with resumable: true answers
// the URL) sent in pieces. A piece that fails on the network is not fatal: the uploader asks the server
// where it stands (HEAD → Upload-Offset) and goes on from there, so a dropped connection costs at most
// the piece in flight, never the bytes already sent.

type Progress = (sent: number, total: number) => void;
type Target = { uploadUrl: string; uploadHeaders: Record<string, string> };

export const PIECE_BYTES = 8 * 1024 * 1024;

export async function uploadResumable(
  target: Target,
  file: string,
  onProgress: Progress = () => {},
  o: { fetchImpl?: typeof fetch; pieceBytes?: number; retries?: number; backoffMs?: number } = {},
): Promise<void> {
  const doFetch = o.fetchImpl ?? fetch;
  const piece = o.pieceBytes ?? PIECE_BYTES;
  const retries = o.retries ?? 5;
  const tus = { 'Tus-Resumable': '1.0.0', ...target.uploadHeaders };
  const fh = await fsp.open(file, 'r');
  try {
    const total = (await fh.stat()).size;
    const where = async () => {
      const res = await doFetch(target.uploadUrl, { method: 'HEAD', headers: tus });
      if (res.status !== 200) throw await failure(res);
      return Number(res.headers.get('upload-offset'));
    };
    let offset = await where();
    let failures = 0;
    onProgress(offset, total);
    while (offset < total) {
      const length = Math.min(piece, total - offset);
      const buf = Buffer.alloc(length);
      await fh.read(buf, 0, length, offset);
      let res: Response;
      try {
        res = await doFetch(target.uploadUrl, {
          method: 'PATCH',
          headers: {
            ...tus,
            'Upload-Offset': String(offset),
            'Content-Type': 'application/offset+octet-stream',
          },
          body: new Uint8Array(buf),
        });
      } catch (err) {
        // The network, not the server, failed: ask where the upload stands and go on from there.
        if (++failures > retries) throw err;
        await new Promise((r) => setTimeout(r, (o.backoffMs ?? 1000) * failures));
        offset = await where();
        continue;
      }
      if (res.status === 204) {
        offset = Number(res.headers.get('upload-offset'));
        failures = 0;
        onProgress(offset, total);
      } else if (res.status === 409 && failures++ < retries) {
        // Another writer or a lost answer moved the offset: resynchronise (a confirmed upload fails there).
        await res.body?.cancel();
        offset = await where();
      } else throw await failure(res);
    }
  } finally {
    await fh.close();
  }
}

/** What a bodiless HEAD answer means (tus answers HEAD without a body). */
const HEAD_MEANING: Record<number, string> = {
  404: 'no such upload (discarded, or a wrong URL)',
  409: 'this upload was already confirmed',
  410: 'this upload has expired; request a new one',
};

async function failure(res: Response): Promise<Error> {
  const text = await res.text().catch(() => '');
  let message = text.slice(0, 300) || HEAD_MEANING[res.status] || res.statusText;
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    // not JSON
  }
  return new Error(`The upload failed (HTTP ${res.status}): ${message}`);
}
