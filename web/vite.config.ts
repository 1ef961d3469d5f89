import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/**
 * Writes `.br` and `.gz` beside every text asset once, at build time, so the console listener serves compressed
 * bytes without compressing per request or at start.
 */
function precompress(): Plugin {
  return {
    name: 'unigate-precompress',
    apply: 'build',
    generateBundle(_options, bundle) {
      for (const file of Object.values(bundle)) {
        if (!/\.(?:js|css|html|svg|json|txt)$/.test(file.fileName)) continue;
        const source = file.type === 'chunk' ? file.code : file.source;
        const bytes = typeof source === 'string' ? Buffer.from(source) : Buffer.from(source);
        if (bytes.length < 1024) continue;
        this.emitFile({ type: 'asset', fileName: `${file.fileName}.br`, source: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }) });
        this.emitFile({ type: 'asset', fileName: `${file.fileName}.gz`, source: gzipSync(bytes, { level: 9 }) });
      }
    },
  };
}

/**
 * The console's browser app. Built from the repository root (`npm run build`) into dist/web with hashed file
 * names; the console listener serves that folder. JSX goes through Vite's own esbuild transform (no React plugin:
 * the production build needs no Fast Refresh).
 */
export default defineConfig({
  root: 'web',
  base: '/',
  esbuild: { jsx: 'automatic' },
  plugins: [precompress()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    target: 'es2022',
    assetsDir: 'assets',
    sourcemap: false,
    // The console's own CSP forbids inline scripts and styles: keep every asset a file.
    assetsInlineLimit: 0,
    cssCodeSplit: true,
    rollupOptions: {
      onwarn(warning, warn) {
        // Libraries mark their modules "use client" for React Server Components; a client-only bundle ignores it.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
      output: {
        manualChunks(id) {
          if (id.includes('node_modules/recharts') || id.includes('node_modules/d3-') || id.includes('node_modules/victory-vendor')) return 'charts';
          if (id.includes('node_modules/react') || id.includes('node_modules/scheduler') || id.includes('node_modules/react-router')) return 'react';
          return undefined;
        },
      },
    },
  },
  server: {
    // `npx vite --config web/vite.config.ts` during development: the console API of a running gateway.
    proxy: { '/api': 'http://127.0.0.1:8081' },
  },
});
