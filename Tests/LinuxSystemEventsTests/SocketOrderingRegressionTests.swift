import Foundation
import Glibc
import MainLoopKit
import MainLoopJSON
import Testing
import TestSupport

/// Sends `bytes` in one write and reads `count` reply lines.
func exchangeLines(_ bytes: [UInt8], path: String, count: Int) throws -> [String] {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let utf8 = Array(path.utf8)
        raw.copyBytes(from: utf8)
        raw[utf8.count] = 0
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else { throw TestFailure("connect: \(errno)") }
    var limit = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    guard sent == bytes.count else { throw TestFailure("short write") }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while received.filter({ $0 == UInt8(ascii: "\n") }).count < count {
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { break }
        received.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct SocketOrderingRegressionTests {
    /// Home, two orientation events and foreground in one write
    /// are applied in order: one merged notification after the resume, and
    /// each `ok` means the request was applied.
    @Test func requestsInOneWriteTakeEffectInArrivalOrder() throws {
        let service = try RunningService()
        defer { service.stop() }
        let requests = [#"{"lifecycle":"home"}"#, #"{"system":{"orientation":"faceUp"}}"#,
                        #"{"system":{"orientation":"landscapeLeft"}}"#, #"{"lifecycle":"foreground"}"#]
        let replies = try exchangeLines(Array((requests.joined(separator: "\n") + "\n").utf8), path: service.socket, count: 4)
        #expect(replies.count == 4)
        #expect(replies.allSatisfy { $0.contains(#""ok":true"#) }, "\(replies)")
        #expect(replies.first?.contains("suspended") == true && replies.last?.contains("active") == true, "\(replies)")
        // Every reply came after its request was applied: nothing is pending now.
        let notifications = service.notifications
        #expect(notifications.count == 1, "\(notifications)")
        #expect(notifications.first?["orientation"] == "landscapeLeft" && notifications.first?["merged"] == 2)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
