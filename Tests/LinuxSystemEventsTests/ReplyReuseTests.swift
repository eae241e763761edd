import Foundation
import Glibc
import Logging
import MainLoop
import MainLoopJSON
import MainLoopKit
import Testing
import TestSupport

/// Replies made once and used again: a server copies the line
/// it printed for an object when a handler answers with the very same
/// object, and a responder answers `state` with its last reply while
/// nothing it reports changed. Neither may ever send a stale line. A
/// deterministic loop and a real socket.
///
/// The time limit is a hang guard, not a duration.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct ReplyReuseTests {
    /// Sends `line` on a new connection, runs the loop until idle and
    /// returns the reply line (without its newline).
    static func exchange(_ line: String, with server: ControlServer, on loop: MainRunLoop) throws -> String {
        let client = try RawClient(path: server.path)
        defer { client.close() }
        try loop.runUntilIdle()  // accepted
        client.sendWithoutBlocking(Array((line + "\n").utf8))
        try loop.runUntilIdle()
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(UInt8(ascii: "\n")) {
            let count = recv(client.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { throw TestFailure("no reply to \(line)") }
            reply += buffer[..<count]
        }
        return String(decoding: reply.dropLast(), as: UTF8.self)
    }

    /// The same object again is the same line; an object changed in place
    /// between two replies (its storage unique to the handler, were the
    /// server not holding the one it printed) is printed again, every time.
    @Test func aChangedObjectIsNeverAnsweredWithTheLineOfTheOneBefore() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop(deterministic: true)
        let constant: JSONObject = ["ok": true, "name": "constant"]
        var counter: JSONObject = ["ok": true, "count": 0]
        let server = try ControlServer(loop: loop, path: directory.file("c.sock"), logger: Logger(label: "test")) { request in
            guard request.objectValue?["ask"] == "count" else { return constant }
            counter["count"] = .number((counter["count"]?.numberValue ?? 0) + 1)
            return counter
        }
        defer { server.stop() }
        let ask = { (what: String) in try Self.exchange(#"{"ask":"\#(what)"}"#, with: server, on: loop) }
        #expect(try ask("constant") == #"{"ok":true,"name":"constant"}"#)
        #expect(try ask("constant") == #"{"ok":true,"name":"constant"}"#)
        for count in 1...3 {
            #expect(try ask("count") == #"{"ok":true,"count":\#(count)}"#)
        }
        #expect(try ask("constant") == #"{"ok":true,"name":"constant"}"#)
    }

    /// The reply-size limit holds for a line used again: lowered, the same
    /// object is refused with its size; raised again, it is sent whole.
    @Test func aLineUsedAgainStillMeetsTheReplyLimit() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop(deterministic: true)
        let constant: JSONObject = ["ok": true, "name": "constant"]
        let server = try ControlServer(loop: loop, path: directory.file("c.sock"), logger: Logger(label: "test")) { _ in constant }
        defer { server.stop() }
        let text = #"{"ok":true,"name":"constant"}"#
        #expect(try Self.exchange("{}", with: server, on: loop) == text)
        server.maxReplyBytes = text.utf8.count - 1
        let refused = try Self.exchange("{}", with: server, on: loop)
        #expect(refused.contains("the reply would be \(text.utf8.count) bytes"), "\(refused)")
        server.maxReplyBytes = text.utf8.count
        #expect(try Self.exchange("{}", with: server, on: loop) == text)
    }

    /// A `state` reply reports every change: the state, holding, held
    /// slots, the background time left as the clock moves, and the open
    /// background tasks; asked again with nothing changed, the very same
    /// reply object comes back.
    @Test func theStateReplyFollowsEveryChangeItReports() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let responder = ControlResponder(application: application)
        let server = try responder.serve(path: directory.file("s.sock"), logger: Logger(label: "test"))
        defer { server.stop() }
        let state = { try JSONValue.parse(Self.exchange(#"{"query":"state"}"#, with: server, on: loop)).objectValue ?? [:] }
        try application.perform(.launch)
        #expect(try state()["state"] == "active")
        #expect(responder.handle(["query": "state"]).isIdentical(to: responder.handle(["query": "state"])))

        try application.perform(.home)
        _ = try application.notifications.post(try application.notifications.decodeEvent(["orientation": "faceUp"]))
        var reply = try state()
        #expect(reply["state"] == "suspended" && reply["holding"] == true && reply["heldSlots"] == 1, "\(reply)")

        try application.perform(.foreground)
        let token = try application.beginBackgroundTask(name: "upload")
        try application.perform(.home)
        reply = try state()
        #expect(reply["state"] == "background" && reply["holding"] == false && reply["heldSlots"] == 0, "\(reply)")
        #expect(reply["openBackgroundTasks"] == ["upload"], "\(reply)")
        let left = reply["remainingBackgroundTime"]?.numberValue ?? 0
        try loop.advance(by: .seconds(2))
        reply = try state()
        #expect(reply["remainingBackgroundTime"]?.numberValue == left - 2, "\(reply)")

        try application.endBackgroundTask(token)
        reply = try state()
        #expect(reply["state"] == "suspended" && reply["openBackgroundTasks"] == [], "\(reply)")
    }
}
