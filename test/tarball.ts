import zlib from 'node:zlib';

// Hand-built tarballs for tests, including the malicious ones no honest packer writes.

export type TarEntry = {
  path: string;
  type?: 'file' | 'dir' | 'symlink' | 'link' | 'fifo';
  body?: string | Buffer;
  linkpath?: string;
  mode?: number;
};

const FLAGS = { file: '0', link: '1', symlink: '2', fifo: '6', dir: '5' } as const;

function header(e: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(512);
  const put = (s: string, off: number, len: number) => h.write(s.slice(0, len), off, len, 'utf8');
  const oct = (n: number, off: number, len: number) =>
    put(`${n.toString(8).padStart(len - 1, '0')}\0`, off, len);
  put(e.path, 0, 100);
  oct(e.mode ?? (e.type === 'dir' ? 0o755 : 0o644), 100, 8);
  oct(0, 108, 8);
  oct(0, 116, 8);
  oct(size, 124, 12);
  oct(Math.floor(Date.now() / 1000), 136, 12);
  h.write('        ', 148, 8);
  put(FLAGS[e.type ?? 'file'], 156, 1);
  put(e.linkpath ?? '', 157, 100);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

export function makeTarGz(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = e.type === 'file' || !e.type ? Buffer.from(e.body ?? '') : Buffer.alloc(0);
    parts.push(header(e, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(parts));
}
