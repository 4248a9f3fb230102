import ReindexStore
import ReindexSystem

/// The few facts of an ELF file the sandbox needs, read with bounded `pread`s.
struct ELFFile {
    var interpreter: String?
    var runPath: [String] = []
    /// The shared libraries it names (`DT_NEEDED`).
    var needed: [String] = []

    init?(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        func bytes(_ offset: UInt64, _ count: Int) -> [UInt8]? {
            guard count > 0, count <= 1 << 20, offset < UInt64(Int64.max) else { return nil }
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? buffer : nil
        }
        func u16(_ b: [UInt8], _ at: Int) -> UInt64 { UInt64(b[at]) | UInt64(b[at + 1]) << 8 }
        func u32(_ b: [UInt8], _ at: Int) -> UInt64 { u16(b, at) | u16(b, at + 2) << 16 }
        func u64(_ b: [UInt8], _ at: Int) -> UInt64 { u32(b, at) | u32(b, at + 4) << 32 }
        func string(_ offset: UInt64, limit: Int = 4096) -> String? {
            var result: [UInt8] = []
            var at = offset
            while result.count < limit, let chunk = bytes(at, 64) ?? bytes(at, 1) {
                if let end = chunk.firstIndex(of: 0) { result += chunk[..<end]; return String(decoding: result, as: UTF8.self) }
                result += chunk
                at += UInt64(chunk.count)
            }
            return nil
        }
        // 64-bit (class 2), little-endian (data 1): what the supported systems run.
        guard let header = bytes(0, 64), header[4] == 2, header[5] == 1 else { return nil }
        let programHeaders = u64(header, 0x20), entrySize = Int(u16(header, 0x36)), count = Int(u16(header, 0x38))
        guard entrySize >= 56, count > 0, count <= 512, let table = bytes(programHeaders, entrySize * count) else { return nil }
        var loads: [(vaddr: UInt64, offset: UInt64, size: UInt64)] = []
        var dynamic: (offset: UInt64, size: UInt64)?
        for n in 0..<count {
            let at = n * entrySize
            let type = u32(table, at)
            let offset = u64(table, at + 8), vaddr = u64(table, at + 16), fileSize = u64(table, at + 32)
            switch type {
            case 1: loads.append((vaddr, offset, fileSize))
            case 2: dynamic = (offset, fileSize)
            case 3: interpreter = string(offset, limit: Int(min(fileSize, 4096)))
            default: break
            }
        }
        guard let dynamic, dynamic.size >= 16, dynamic.size <= 1 << 16, let entries = bytes(dynamic.offset, Int(dynamic.size)) else { return }
        var stringTable: UInt64?
        var paths: [UInt64] = []
        var libraries: [UInt64] = []
        for n in 0..<(entries.count / 16) {
            let tag = u64(entries, n * 16), value = u64(entries, n * 16 + 8)
            if tag == 0 { break }
            if tag == 5 { stringTable = value }            // DT_STRTAB (an address)
            if tag == 15 || tag == 29 { paths.append(value) }  // DT_RPATH, DT_RUNPATH (offsets)
            if tag == 1 && libraries.count < 256 { libraries.append(value) }  // DT_NEEDED (offsets)
        }
        guard let address = stringTable,
              let load = loads.first(where: { address >= $0.vaddr && address - $0.vaddr < $0.size }) else { return }
        let tableOffset = address - load.vaddr + load.offset
        for offset in paths {
            guard let text = string(tableOffset + offset) else { continue }
            runPath += text.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        }
        needed = libraries.compactMap { string(tableOffset + $0) }
    }
}
