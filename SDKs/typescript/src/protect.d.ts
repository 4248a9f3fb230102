// Side effect only: protects stdout at import time (see protectStdout in index.d.ts).
export {};
