// reindex-extension: the package's type declarations (they live beside the implementation, in
// src/index.d.ts, so that importing src/index.js by a relative path is typed as well).
export * from './src/index.js';
