/**
 * The seconds that `REINDEX_WAIT_FOR_DEBUGGER` asks for, read the way the Swift SDK reads it:
 * a number of seconds, 0 (or less) meaning forever; anything that is not a number means no gate.
 * Returns the seconds (0 = forever), or null when there is no gate.
 */
export declare function debuggerWaitSeconds(value: string | undefined): number | null;
/** The inspector's port when `REINDEX_INSPECTOR_PORT` does not name one (Node's own default,
 * the one Chrome's chrome://inspect and VS Code look at). */
export declare const DEFAULT_INSPECTOR_PORT = 9229;
/** Whether a debugger attached through the gate in this process. */
export declare function debuggerAttachedInGate(): boolean;
/**
 * Whether a debugger attached through the gate and the SDK has not paused for it yet; reading it
 * clears it. The connection calls it just before it calls the first request's handler.
 */
export declare function takeDebuggerBreak(): boolean;
/**
 * The gate of debug mode, for Node's inspector. When `REINDEX_WAIT_FOR_DEBUGGER` is set (by
 * `reindex debug --wait-for-debugger[=SECONDS]`), opens the inspector on 127.0.0.1 (unless
 * `node --inspect` already did), prints the PID and the ways to attach to stderr, and blocks
 * until a debugger attaches — any inspector client: `node inspect 127.0.0.1:PORT`, Chrome
 * DevTools (chrome://inspect), VS Code — or the given seconds pass (`0` waits forever). Does
 * nothing otherwise. It ends the moment the client sends `Runtime.runIfWaitingForDebugger`,
 * which every one of them does when it attaches; nothing is read from stdin or written to the
 * protocol before it ends, so the host's `initialize` waits in the pipe.
 *
 * The port is `REINDEX_INSPECTOR_PORT` (default 9229; `0` for any free one). When it is taken,
 * the inspector opens on a free port and says which. `REINDEX_INSPECT_HOST` chooses another
 * address than 127.0.0.1.
 *
 * After a debugger attached, the SDK pauses once just before it calls the first request's
 * handler, as `node --inspect-brk` pauses before the first line: set breakpoints, then continue,
 * or step into the handler.
 *
 * Returns whether a debugger attached.
 */
export declare function waitForDebuggerIfRequested(options?: {
    env?: Record<string, string | undefined>;
    log?: (text: string) => void;
}): boolean;
