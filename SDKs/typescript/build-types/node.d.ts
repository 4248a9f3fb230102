// The few Node.js APIs the SDK's source uses, declared for `tsc` (build time only).
//
// Debian's TypeScript compiler (node-typescript) comes without @types/node, and the npm registry
// is out of reach, so the SDK declares what it uses of Node here. Web globals (AbortController,
// TextDecoder, URL, console) come from the DOM lib. Nothing in the SDK's public declarations
// (dist/*.d.ts) refers to these types, so an extension compiles against the SDK with or without
// @types/node; test/types.test.mjs checks that with `"types": []`.

interface NodeTimer {
  unref(): this;
  ref(): this;
}

interface NodeWritable {
  write(chunk: string): boolean;
  end(callback?: () => void): void;
  on(event: string, listener: (...args: any[]) => void): this;
  once(event: string, listener: (...args: any[]) => void): this;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
}

interface NodeBuffer extends Uint8Array {
  toString(encoding?: string, start?: number, end?: number): string;
  subarray(start?: number, end?: number): NodeBuffer;
  indexOf(value: number | string, byteOffset?: number): number;
}

interface NodeBufferConstructor {
  from(text: string, encoding?: string): NodeBuffer;
  from(data: ArrayBuffer | SharedArrayBuffer, byteOffset?: number, length?: number): NodeBuffer;
  from(data: Uint8Array | readonly number[]): NodeBuffer;
  concat(list: readonly Uint8Array[], totalLength?: number): NodeBuffer;
  byteLength(text: string, encoding?: string): number;
}

declare var process: {
  env: Record<string, string | undefined>;
  argv: string[];
  pid: number;
  debugPort: number;
  execPath: string;
  stderr: NodeWritable;
  stdin: AsyncIterable<Uint8Array>;
  exit(code?: number): never;
  on(event: string, listener: (...args: any[]) => void): unknown;
};

declare module 'node:buffer' {
  export const Buffer: NodeBufferConstructor;
  export type Buffer = NodeBuffer;
}

declare module 'node:timers' {
  export function setTimeout(callback: () => void, ms?: number): NodeTimer;
  export function clearTimeout(timer: NodeTimer | undefined): void;
  export function setImmediate(callback: (value?: unknown) => void): NodeTimer;
}

declare module 'node:fs' {
  export interface WriteStream extends NodeWritable {}
  export function createWriteStream(path: string, options: { fd: number; autoClose: boolean; highWaterMark: number }): WriteStream;
  export function readFileSync(path: string, encoding: 'utf8'): string;
  const fs: { createWriteStream: typeof createWriteStream; readFileSync: typeof readFileSync };
  export default fs;
}

declare module 'node:path' {
  export function resolve(...paths: string[]): string;
  export function join(...paths: string[]): string;
  export function dirname(path: string): string;
  export function basename(path: string): string;
  const path: { resolve: typeof resolve; join: typeof join; dirname: typeof dirname; basename: typeof basename };
  export default path;
}

declare module 'node:module' {
  export function createRequire(url: string): (id: string) => any;
}

declare module 'node:console' {
  export class Console {
    constructor(options: { stdout: NodeWritable; stderr: NodeWritable });
  }
}

declare module 'node:inspector' {
  export function url(): string | undefined;
  export function open(port?: number, host?: string, wait?: boolean): void;
  export function close(): void;
  export function waitForDebugger(): void;
  export const console: Record<string, unknown>;
}

declare module 'node:worker_threads' {
  export class Worker {
    constructor(code: string, options: { eval: boolean; workerData: unknown });
    unref(): void;
  }
}

declare function setImmediate(callback: (value?: unknown) => void): NodeTimer;
