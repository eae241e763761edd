import Foundation
import Glibc
import MainLoopKit
import MainLoopJSON
import Testing
import TestSupport

/// A bounded soak of a real `mainloop run` (23,000 answered
/// requests, about 15 s here): clients
/// cycling the lifecycle and posting events at a high rate, on persistent
/// connections and on short ones. Memory and descriptors stay flat, and the
/// accounting identity holds for every kind.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SoakTests {
    /// Open descriptors of `pid`.
    static func descriptors(of pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    @Test func manyClientsAtAHighRateKeepTheServiceFlat() throws {
        let service = try ServiceProcess()
        let socket = service.socket
        let pid = service.process.processIdentifier

        final class Tally: @unchecked Sendable {
            private let lock = NSLock()
            private var counts: [String: Int] = [:]
            var stop = false
            func add(_ key: String) { lock.withLock { counts[key, default: 0] += 1 } }
            var snapshot: [String: Int] { lock.withLock { counts } }
        }
        let tally = Tally()
        /// A persistent connection sending `lines` in turn, one reply read per request.
        func persistent(_ lines: [String]) -> Thread {
            Thread {
                guard let client = try? RawClient(path: socket) else { return tally.add("connectFailed") }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                var index = 0
                while !tally.stop {
                    let line = Array((lines[index % lines.count] + "\n").utf8)
                    index += 1
                    guard client.sendWithoutBlocking(line) == line.count else { continue }
                    var reply: [UInt8] = []
                    while !reply.contains(UInt8(ascii: "\n")) {
                        let count = recv(client.fd, &buffer, buffer.count, 0)
                        guard count > 0 else { return tally.add("connectionLost") }
                        reply += buffer[0..<count]
                    }
                    tally.add(String(decoding: reply, as: UTF8.self).contains(#""ok":true"#) ? "ok" : "refused")
                }
                client.close()
            }
        }
        let threads = [
            persistent([#"{"lifecycle":"home"}"#, #"{"lifecycle":"foreground"}"#]),
            persistent([#"{"system":{"orientation":"faceUp"}}"#, #"{"system":{"orientation":"portrait"}}"#,
                        #"{"system":{"locale":"fr_FR"}}"#, #"{"system":{"locale":"en_US"}}"#]),
            persistent((0..<50).map { #"{"system":{"accessory":{"id":"dock-\#($0)","connected":\#($0 % 2 == 0)}}}"# }),
            persistent([#"{"input":"tap"}"#, #"{"query":"state"}"#]),
            Thread {  // short connections: one request each
                while !tally.stop {
                    let reply = try? ControlClient.send(["query": "stats"], to: socket)
                    tally.add(reply?["ok"] == .bool(true) ? "short" : "shortFailed")
                }
            },
        ]
        for thread in threads { thread.start() }
        // Measured by work done, not by time: a slow machine takes longer,
        // it does not fail. Warm up (buffers, caches, the first
        // allocations) for 3,000 answered requests, then measure across
        // 20,000 more.
        func answered() -> Int { tally.snapshot["ok"] ?? 0 }
        #expect(eventually(timeout: 60) { answered() >= 3_000 }, "warm-up: \(tally.snapshot)")
        let rssBefore = HostileClientTests.residentBytes(of: pid), fdsBefore = Self.descriptors(of: pid)
        let start = answered()
        #expect(eventually(timeout: 90) { answered() >= start + 20_000 }, "the service kept answering: \(tally.snapshot)")
        let rssAfter = HostileClientTests.residentBytes(of: pid), fdsAfter = Self.descriptors(of: pid)
        tally.stop = true
        for thread in threads { while !thread.isFinished { usleep(1_000) } }
        let counts = tally.snapshot
        #expect(counts["connectFailed"] == nil && counts["connectionLost"] == nil && counts["shortFailed"] == nil, "\(counts)")
        #expect(rssAfter - rssBefore < 16 << 20, "RSS grew by \((rssAfter - rssBefore) >> 10) KiB")
        #expect(abs(fdsAfter - fdsBefore) <= 2, "descriptors \(fdsBefore) → \(fdsAfter)")
        let stats = try ControlClient.send(["query": "stats"], to: socket)
        let kinds = stats["kinds"]?.objectValue ?? JSONObject()
        #expect(!kinds.isEmpty)
        for (kind, value) in kinds {
            let counters = value.objectValue ?? JSONObject()
            func count(_ name: String) -> Double { counters[name]?.numberValue ?? -1 }
            #expect(count("held") == count("folded") + count("cancelled") + count("discarded") + count("pending"),
                    "accounting identity for \(kind): \(counters)")
        }
        #expect(service.terminate() == 0)
    }
}
