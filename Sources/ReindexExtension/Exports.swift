// What an extension author uses of the wire types, and nothing else: items and their
// attributes, custom attribute values, the reason of a request, the bundle's manifest. The
// framing, the JSON reader and writer, the validators and the message types stay inside the SDK;
// an extension that wants them imports ReindexProtocol itself.
@_exported import struct ReindexProtocol.SearchableItem
@_exported import struct ReindexProtocol.SearchableItemAttributes
@_exported import enum ReindexProtocol.JSONValue
@_exported import struct ReindexProtocol.ReindexReason
@_exported import struct ReindexProtocol.Manifest
@_exported import struct ReindexProtocol.AttributeDeclaration
