import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn } from '../api.ts';
import { ErrorNote } from '../ui.tsx';
import type { Asset, CdnScope } from './cdn-types.ts';

// Upload by drag and drop (or the file picker): ask Pier for a presigned URL, PUT the bytes straight to it
// with XMLHttpRequest (fetch has no upload progress), then confirm so Pier checks what arrived.

type Started = FnOutput<'createCdnUploadForCli'>;

function put(url: string, headers: Record<string, string>, file: File, onProgress: (pct: number) => void) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(Math.round((e.loaded / e.total) * 100));
    };
    xhr.onload = () =>
      xhr.status >= 200 && xhr.status < 300
        ? resolve()
        : reject(new Error(`The upload was refused (${xhr.status}).`));
    xhr.onerror = () => reject(new Error('The upload failed; check your connection.'));
    xhr.send(file);
  });
}

export function UploadZone(props: { scope: CdnScope; folder: string; onUploaded: (a: Asset) => void }) {
  const [over, setOver] = useState(false);
  const [busy, setBusy] = useState<{ name: string; pct: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [folder, setFolder] = useState(props.folder);

  const upload = async (files: FileList | null) => {
    const list = files ? [...files] : [];
    setError(null);
    for (const file of list) {
      setBusy({ name: file.name, pct: 0 });
      try {
        const started = await fn<Started>('createCdnUploadForCli', {
          ...props.scope,
          filename: file.name,
          mimeType: file.type || 'application/octet-stream',
          size: file.size,
          ...(folder.trim() ? { folder: folder.trim() } : {}),
        });
        await put(started.uploadUrl, started.uploadHeaders, file, (pct) => setBusy({ name: file.name, pct }));
        const asset = await fn<Asset>('confirmCdnUploadForCli', {
          ...props.scope,
          assetId: started.assetId,
        });
        props.onUploaded(asset);
      } catch (e) {
        setError(e);
        break;
      } finally {
        setBusy(null);
      }
    }
  };

  return (
    <section class="cdn-upload" aria-labelledby="cdn-upload-title">
      <h2 id="cdn-upload-title">Upload</h2>
      <label class="cdn-folder-input">
        Into folder
        <input
          value={folder}
          placeholder="(none)"
          onInput={(e) => setFolder((e.target as HTMLInputElement).value)}
        />
      </label>
      <label
        class={`drop-zone${over ? ' over' : ''}`}
        data-testid="drop-zone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          void upload(e.dataTransfer?.files ?? null);
        }}
      >
        <span>Drop files here or choose them (100 MB each at most)</span>
        <input
          type="file"
          multiple
          disabled={!!busy}
          data-testid="file-input"
          onChange={(e) => {
            const input = e.target as HTMLInputElement;
            void upload(input.files).then(() => {
              input.value = '';
            });
          }}
        />
      </label>
      {busy ? (
        <p class="upload-progress" role="status">
          Uploading {busy.name}…{' '}
          <progress max={100} value={busy.pct} aria-label={`Upload of ${busy.name}`}>
            {busy.pct}%
          </progress>{' '}
          {busy.pct}%
        </p>
      ) : null}
      <ErrorNote error={error} />
    </section>
  );
}
