// The types an extension is written against: items and their attributes, the extension itself,
// and the options of `run()`.

import type { SearchableIndex } from './searchable-index.js';

/** Why the host asked. Later hosts may send reasons not listed here: accept them. */
export type ReindexReason = 'forced' | 'indexLost' | 'bundleChanged' | 'expiring' | 'retry' | (string & {});

/** A JSON-RPC request id. The host uses numbers. */
export type RequestId = number | string;

/** An RFC 3339 timestamp, or a `Date` (sent as `toISOString()`; an invalid `Date` is refused). */
export type Timestamp = string | Date;

/**
 * The value of a custom attribute, after the types a manifest can declare (`"attributes":
 * {NAME: {"type": …}}`): `string`, `number` (finite), `date` (a `Date`, or an RFC 3339
 * string), `bool`, `strings`. `null` removes the attribute in a partial update (`isUpdate`).
 */
export type CustomAttributeValue = string | number | boolean | Date | readonly string[] | null;

/** Custom attributes by name: any names, with values of the declarable types. */
export interface CustomAttributes {
  readonly [name: string]: CustomAttributeValue | undefined;
}

/**
 * The shape a map of custom attributes must have: every member a `CustomAttributeValue`.
 * Satisfied by an interface or type of your own (`interface Book { pages?: number; isbn?: string }`),
 * which then makes a misspelt or mistyped custom attribute a compile error too.
 */
export type CustomAttributesOf<Custom> = { readonly [Name in keyof Custom]?: CustomAttributeValue };

/**
 * An item's attributes. Every key is optional, and only these keys are allowed, so a misspelt
 * attribute (`keyword:` for `keywords:`) does not compile. Attributes of your own go in `custom`,
 * which the SDK sends as members of the attributes object, as the protocol carries them: declare
 * them in the manifest (`"attributes"`) to have them type-checked by the host, filtered, sorted
 * and searched. In a partial update (`isUpdate: true`) an attribute set to `null` is removed.
 *
 * A number must be finite: `NaN` and ±`Infinity` (say `Number('n/a')`) make `put` throw a
 * `TypeError` naming the item and the attribute, and nothing of that call is sent.
 *
 * `Custom` types the custom attributes: `ItemAttributes<{ pages?: number; isbn?: string }>`.
 */
export interface ItemAttributes<Custom extends CustomAttributesOf<Custom> = CustomAttributes> {
  /** Full-text searched. */
  title?: string | null;
  /** Full-text searched. */
  displayName?: string | null;
  /** Full-text searched. */
  contentDescription?: string | null;
  /** Full-text searched. */
  textContent?: string | null;
  contentType?: string | null;
  contentURL?: string | null;
  thumbnailURL?: string | null;
  relatedUniqueIdentifier?: string | null;
  /** Full-text searched. */
  keywords?: readonly string[] | null;
  /** Full-text searched. */
  alternateNames?: readonly string[] | null;
  /** Full-text searched. */
  authors?: readonly string[] | null;
  emailAddresses?: readonly string[] | null;
  phoneNumbers?: readonly string[] | null;
  /** A finite number. */
  rating?: number | null;
  /** A finite number. */
  rankingHint?: number | null;
  /** A finite number. */
  latitude?: number | null;
  /** A finite number. */
  longitude?: number | null;
  supportsPhoneCall?: boolean | null;
  supportsNavigation?: boolean | null;
  startDate?: Timestamp | null;
  endDate?: Timestamp | null;
  contentCreationDate?: Timestamp | null;
  contentModificationDate?: Timestamp | null;
  /** Base64, or bytes (the SDK encodes them). */
  thumbnailData?: string | Uint8Array | null;
  /** Attributes of your own (declared in the manifest's `"attributes"`, or kept as given).
   * Sent as members of the attributes object; a name of a built-in attribute is refused here. */
  custom?: Custom | null;
}

/** One searchable thing (Core Spotlight's `CSSearchableItem`). */
export interface SearchableItem<Custom extends CustomAttributesOf<Custom> = CustomAttributes> {
  /** 1 to 1024 bytes of UTF-8, unique within the bundle. Putting it again replaces the item. */
  uniqueIdentifier: string;
  /** Groups items for `deleteDomains` (`a.b` also covers `a.b.c`). */
  domainIdentifier?: string;
  /** After this moment searches no longer return the item. */
  expirationDate?: Timestamp;
  attributes?: ItemAttributes<Custom> | null;
  /** Merge `attributes` into the existing item of this identifier instead of replacing it. */
  isUpdate?: boolean;
}

/** The client state handed back to a resumed `reindexAll`: a Node `Buffer` at run time. */
export interface ClientState extends Uint8Array {
  toString(encoding?: 'utf8' | 'utf-8' | 'ascii' | 'latin1' | 'binary' | 'base64' | 'base64url' | 'hex' | 'ucs2' | 'utf16le', start?: number, end?: number): string;
}

/** A stream the SDK can write protocol lines to (a Node `Writable`). */
export interface ProtocolOutput {
  write(chunk: string): boolean;
  on(event: 'drain' | 'error' | 'close', listener: (...args: any[]) => void): unknown;
}

/** Options of `run()`, for tests and embedding; an extension normally passes none. */
export interface RunOptions {
  /** Read the host's messages from this stream instead of stdin. */
  input?: AsyncIterable<Uint8Array | string>;
  /** Write protocol messages here instead of descriptor 1. */
  output?: ProtocolOutput;
  /** Exit the process (status 0) when the input ends, and on SIGTERM. Default: true without `input`. */
  exit?: boolean;
  /** Engage `protectStdout()`. Default: true when writing to descriptor 1. */
  protectStdout?: boolean;
  /** Honour `REINDEX_WAIT_FOR_DEBUGGER`. Default: true without `input`. */
  debuggerGate?: boolean;
  /** Use this manifest (or none, with `null`) instead of reading `manifest.json`. */
  manifest?: Record<string, unknown> | null;
  /** Read `manifest.json` from this directory instead of the working directory. */
  manifestDirectory?: string;
  /** Where the SDK's own diagnostics go. Default: stderr, prefixed `reindex-extension: `. */
  log?: (text: string) => void;
}

/** What an extension implements (Core Spotlight's `CSIndexExtensionRequestHandler`). Resolving
 * acknowledges the request; throwing or rejecting refuses it with the error's message (and its
 * stack, in the log and in the refusal's `data.stack`). */
export interface IndexExtension {
  /** Index everything the extension has. */
  reindexAll(index: SearchableIndex): Promise<void> | void;
  /** Re-index exactly these items: put the ones that exist, delete the ones that are gone.
   * Without it, `reindexItems` requests are answered with -32601. */
  reindexItems?(identifiers: string[], index: SearchableIndex): Promise<void> | void;
  /** The name reported in `initialize` (default: the manifest's `displayName`). */
  readonly extensionName?: string;
  /** The version reported in `initialize` (default: the manifest's `version`, else "0"). */
  readonly extensionVersion?: string;
}

/** An extension as `run()` and the testing helpers take it: an object, or a class that is
 * instantiated with no arguments. */
export type ExtensionLike = IndexExtension | (new () => IndexExtension);
