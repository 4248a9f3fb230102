/** A bundle's manifest as read: the SDK looks only at `displayName`, `version` and
 * `bundleIdentifier`. */
export declare type ManifestObject = Record<string, unknown>;
/**
 * The bundle's manifest, read from `manifest.json` in `directory` (by default the working
 * directory, which the host sets to the bundle directory), else beside the main script.
 * Returns `null` when there is none or it cannot be read; only `displayName`, `version` and
 * `bundleIdentifier` are looked at by the SDK.
 */
export declare function readManifest(directory?: string): ManifestObject | null;
/**
 * The name and version the extension reports in `initialize`: the extension's own
 * `extensionName` / `extensionVersion` when it has them, else the manifest's `displayName`
 * (then `bundleIdentifier`) and `version`, else the executable's file name and `"0"`.
 */
export declare function extensionIdentity(extension: {
    extensionName?: unknown;
    extensionVersion?: unknown;
}, manifest: ManifestObject | null): {
    name: string;
    version: string;
};
