import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';

// The HEIC decoding thread of heic.ts: libheif compiled to WASM decodes synchronously (about 1 s for a
// 12 MP iPhone photo), so it runs here rather than on the server's event loop. One image at a time.

type Decoded = { width: number; height: number; data: Uint8ClampedArray };
const decode = createRequire(import.meta.url)('heic-decode') as (i: { buffer: Buffer }) => Promise<Decoded>;

parentPort?.on('message', async (m: { id: number; bytes: Uint8Array }) => {
  try {
    const d = await decode({ buffer: Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength) });
    const data = new Uint8Array(d.data.buffer, d.data.byteOffset, d.data.byteLength);
    // libheif answers RGBA even for opaque pictures; knowing saves sharp an alpha channel per output.
    let alpha = false;
    for (let i = 3; i < data.length && !alpha; i += 4) alpha = data[i] !== 255;
    parentPort?.postMessage({ id: m.id, width: d.width, height: d.height, alpha, data }, [
      data.buffer as ArrayBuffer,
    ]);
  } catch (err) {
    parentPort?.postMessage({ id: m.id, error: String((err as Error)?.message ?? err) });
  }
});
