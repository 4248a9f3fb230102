// The one place the C library is imported: every module of the package imports ReindexSystem
// instead of repeating the `#if canImport(Glibc)` block.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#elseif canImport(Musl)
@_exported import Musl
#endif
