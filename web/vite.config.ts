import { defineConfig } from 'vite';

// The dashboard: Preact (≈4 KB gzipped) with JSX compiled by Vite's oxc transform; no plugin needed.
export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline polyfill script: the page's CSP allows scripts from 'self' only.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8787' } },
});
