// Reading the bundle's manifest.json for the name and version reported in `initialize`.
import fs from 'node:fs';
import path from 'node:path';
/**
 * The bundle's manifest, read from `manifest.json` in `directory` (by default the working
 * directory, which the host sets to the bundle directory), else beside the main script.
 * Returns `null` when there is none or it cannot be read; only `displayName`, `version` and
 * `bundleIdentifier` are looked at by the SDK.
 */
export function readManifest(directory) {
    const candidates = [];
    if (directory !== undefined) {
        candidates.push(path.resolve(directory, 'manifest.json'));
    }
    else {
        candidates.push(path.resolve('manifest.json'));
        if (process.argv[1])
            candidates.push(path.join(path.dirname(path.resolve(process.argv[1])), 'manifest.json'));
    }
    for (const file of candidates) {
        let text;
        try {
            text = fs.readFileSync(file, 'utf8');
        }
        catch {
            continue;
        }
        try {
            const value = JSON.parse(text);
            if (value !== null && typeof value === 'object' && !Array.isArray(value))
                return value;
        }
        catch (error) {
            process.stderr.write(`reindex-extension: ignoring ${file}: ${error.message}\n`);
        }
    }
    return null;
}
/**
 * The name and version the extension reports in `initialize`: the extension's own
 * `extensionName` / `extensionVersion` when it has them, else the manifest's `displayName`
 * (then `bundleIdentifier`) and `version`, else the executable's file name and `"0"`.
 */
export function extensionIdentity(extension, manifest) {
    const text = (value) => (typeof value === 'string' && value !== '' ? value : undefined);
    const name = text(extension.extensionName)
        ?? text(manifest?.displayName)
        ?? text(manifest?.bundleIdentifier)
        ?? text(process.env.REINDEX_BUNDLE_IDENTIFIER)
        ?? (process.argv[1] ? path.basename(process.argv[1]) : 'extension');
    const version = text(extension.extensionVersion) ?? text(manifest?.version) ?? '0';
    return { name, version };
}
