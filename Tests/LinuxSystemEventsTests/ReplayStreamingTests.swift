import Foundation
import Glibc
import Testing
import TestSupport

/// `mainloop replay` streams its output, with
/// no cap of its own, in memory that does not grow with the output.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct ReplayStreamingTests {
    /// A 150-byte scenario whose timer fires a million times prints a
    /// million lines; the old replay stopped at 100,000 with exit 1 (and
    /// had kept every line in memory until the end).
    @Test func aMillionObservationsStreamInBoundedMemory() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("million.json")
        writeFile(file, #"{"steps": [{"at": 0, "lifecycle": "launch"}, {"at": 0, "app": {"timer": "t", "every": 0.000001}}, {"at": 1, "input": "x"}]}"#)
        // posix_spawn directly: the test reads the child's pipe as it
        // streams, and reaps the child itself for its exit status.
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, descriptors[1], STDOUT_FILENO)
        // Nothing else of this process goes to the child: it runs for
        // seconds, and a pipe end of a test running beside it (not
        // close-on-exec) would stay open in it meanwhile.
        #expect(addCloseFrom(&actions, 3) == 0)
        var sentinel: [Int32] = [0, 0]
        #expect(pipe(&sentinel) == 0)
        defer { close(sentinel[0]); close(sentinel[1]) }
        let arguments = [BuiltTool.path, "replay", file]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, BuiltTool.path, &actions, nil, &argv, environ) == 0)
        close(descriptors[1])
        #expect(try !Self.holds(pid, descriptorOf: sentinel[1]), "the replay kept a descriptor of the test process")
        // VmHWM, the peak RSS of the replay's own memory (wait4's maxrss
        // would include this test process's, inherited through the spawn),
        // read as the output arrives: a replay that kept its lines would
        // peak at the end, while the last lines are being read.
        var lines = 0, tail: [UInt8] = [], peakKiB = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(descriptors[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            for byte in buffer[0..<count] where byte == UInt8(ascii: "\n") { lines += 1 }
            peakKiB = max(peakKiB, Self.peakResidentKiB(of: pid))
            tail = Array((tail + buffer[0..<count]).suffix(200))
        }
        close(descriptors[0])
        let (status, inTime) = reap(pid)
        #expect(inTime, "the replay did not exit within 60 s of closing its output")
        #expect(status == 0, "exit status \(status)")
        #expect(lines == 1_000_000 + 6, "every line was printed: \(lines)")
        #expect(String(decoding: tail, as: UTF8.self).contains(#""input":"x""#), "the last line is the input")
        #expect(peakKiB > 0 && peakKiB < 100_000, "peak RSS \(peakKiB) KiB: the output was not held in memory")
    }

    /// Whether process `pid` has open what this process's `descriptor` is
    /// (the same pipe or file, by its `/proc` link).
    static func holds(_ pid: pid_t, descriptorOf descriptor: Int32) throws -> Bool {
        let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
        let theirs = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        // A descriptor the child closed between the listing and the read is not held.
        return theirs.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == ours }
    }

    /// VmHWM of a live process in KiB (0 once it is gone).
    static func peakResidentKiB(of pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

extension ReplayStreamingTests {
    /// An endless scenario "file" (`/dev/zero`) was read until the process
    /// was killed; past 256 MiB it is an error naming the file.
    @Test func anEndlessScenarioFileIsAnErrorNotUnboundedGrowth() throws {
        let result = try BuiltTool.run(["replay", "/dev/zero"])
        #expect(result.status == 1)
        #expect(result.error.contains("/dev/zero") && result.error.contains("File too large"), "\(result.error)")
    }
}
