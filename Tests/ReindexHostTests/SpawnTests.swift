import Foundation
import ReindexHost
import ReindexSystem
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// How an extension's process is started and how its end is seen, below the session: the child
/// shares the host's memory until exec (Linux), so what it must not inherit — blocked signals,
/// ignored ones, handlers — is checked in the exec'd process itself; and the end of a process
/// wakes the host through its exit descriptor, not at a timer's next tick.
final class SpawnTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        signal(SIGPIPE, SIG_IGN)
    }

    /// A bundle whose executable is `script` (a shell script), unsandboxed.
    private func bundle(_ identifier: String, script: String) throws -> DiscoveredBundle {
        var spec = T.BundleSpec(identifier, executable: "exit_before_initialize.sh")
        spec.sandbox = false
        let directory = try T.makeBundle(spec, in: scratch + "/extensions")
        try script.write(toFile: directory + "/exit_before_initialize.sh", atomically: false, encoding: .utf8)
        return try T.loadBundle(directory)
    }

    /// Reads the process's stderr to its end.
    private func stderrText(_ process: ExtensionProcess) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Date().addingTimeInterval(10)
        while Date() < end {
            var entry = pollfd(fd: process.stderrFD, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 1000) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { read(process.stderrFD, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The host ignores SIGPIPE and blocks every signal while the child starts; the extension
    /// gets neither: no signal blocked, none ignored, whatever the host had.
    func testTheExtensionStartsWithNoSignalBlockedOrIgnored() throws {
        // grep replaces the shell and reads its own status: a grep run by the shell would read
        // the shell's mid-spawn, when dash blocks every signal around its vfork of grep.
        let bundle = try bundle("com.example.signals", script: """
            #!/bin/sh
            exec grep -E '^(SigBlk|SigIgn):' /proc/self/status >&2
            """)
        // The calling thread blocks a signal of its own too: the child must not keep it.
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR2)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let process = try ExtensionProcess(bundle: bundle, environment: ["PATH": "/usr/bin:/bin"])
        process.closeStdin()
        let text = stderrText(process)
        XCTAssertEqual(process.waitForExit(blocking: true), .exited(0), text)
        XCTAssertTrue(text.contains("SigBlk:\t0000000000000000"), text)
        XCTAssertTrue(text.contains("SigIgn:\t0000000000000000"), text)
    }

    /// The exit descriptor polls readable once the extension has ended — with its pipes already
    /// at their end, nothing else would wake a wait for it.
    func testTheExitDescriptorWakesWhenTheExtensionEnds() throws {
        let bundle = try bundle("com.example.brief", script: """
            #!/bin/sh
            exec 1>&- 2>&-
            sleep 0.2
            exit 3
            """)
        let process = try ExtensionProcess(bundle: bundle, environment: ["PATH": "/usr/bin:/bin"])
        XCTAssertGreaterThanOrEqual(process.exitFD, 0, "no exit descriptor on this system")
        process.closeStdin()
        XCTAssertEqual(stderrText(process), "")  // its stderr ended at once
        XCTAssertNil(process.waitForExit(blocking: false), "the extension ended before its sleep")
        var entry = pollfd(fd: process.exitFD, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&entry, 1, 20_000), 1, "the exit descriptor never woke")
        XCTAssertEqual(process.waitForExit(blocking: false), .exited(3))
        process.closePipes()
        XCTAssertEqual(process.exitFD, -1)
    }
}
