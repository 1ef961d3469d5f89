import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
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
    // After writing: other plugins still rewrite chunks during generateBundle (the preload map, for one).
    writeBundle(options, bundle) {
      const directory = options.dir;
      if (directory === undefined) return;
      for (const fileName of Object.keys(bundle)) {
        if (!/\.(?:js|css|html|svg|json|txt)$/.test(fileName)) continue;
        const file = path.join(directory, fileName);
        const bytes = readFileSync(file);
        if (bytes.length < 1024) continue;
        writeFileSync(`${file}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));
        writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

/**
 * Records the commit being built in dist/build-info.json, which /api/status reports (src/shared/build-info.ts): asked
 * of git once here, never at run time. Outside a git checkout (an image built without .git) the commit is null, and
 * the deployment may name it with SOURCE_COMMIT instead.
 */
function recordBuildCommit(): Plugin {
  return {
    name: 'unigate-build-commit',
    apply: 'build',
    closeBundle() {
      const root = path.resolve(import.meta.dirname, '..');
      let commit: string | null = null;
      try {
        commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || null;
      } catch {
        commit = null;
      }
      mkdirSync(path.join(root, 'dist'), { recursive: true });
      writeFileSync(path.join(root, 'dist', 'build-info.json'), `${JSON.stringify({ commit })}\n`);
    },
  };
}

export default defineConfig(({ command }) => ({
  root: 'web',
  base: '/',
  esbuild: { jsx: 'automatic' },
  // A build is always the production React, whatever NODE_ENV the calling process has (vitest sets "test").
  ...(command === 'build' ? { define: { 'process.env.NODE_ENV': JSON.stringify('production') } } : {}),
  plugins: [precompress(), recordBuildCommit()],
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
}));
