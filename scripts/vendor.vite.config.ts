import { defineConfig } from 'vite';

/**
 * kysely, bundled into one module for the gateway's process (dist/vendor/kysely.js; src/config/bundled-kysely.ts
 * resolves `kysely` to it). kysely ships as some 250 small modules, and Node keeps a record of every loaded module for
 * the process's life: one module of the same code costs about 1 MiB less resident memory. Unminified: stack traces
 * through it read as kysely's own code.
 */
export default defineConfig({
  logLevel: 'warn',
  build: {
    ssr: 'src/storage/kysely-bundle-entry.ts',
    outDir: 'dist/vendor',
    emptyOutDir: true,
    minify: false,
    sourcemap: false,
    target: 'node22',
    rollupOptions: { output: { format: 'es', entryFileNames: 'kysely.js' } },
  },
  ssr: { noExternal: ['kysely'], target: 'node' },
});
