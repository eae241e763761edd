@testable import ControlSocket
import MainLoopJSON
import Testing
import TestSupport

/// A request's bytes are checked for UTF-8 eight at a time while
/// they are ASCII, then in full; the answer is `String(validating:)`'s.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct RequestBytesTests {
    @Test func theUTF8CheckAgreesWithTheStandardLibrary() {
        let ascii = Array(#"{"system":{"orientation":"faceUp"}}"#.utf8)
        var lines: [[UInt8]] = [[]]
        for length in 1...ascii.count { lines.append(Array(ascii.prefix(length))) }
        for position in 0..<20 {
            let base = Array(ascii.prefix(20))
            for bad: [UInt8] in [[0xFF], [0x80], [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80]] {
                lines.append(Array(base[..<position]) + bad + Array(base[position...]))
            }
            lines.append(Array(base[..<position]) + Array("é🎉".utf8) + Array(base[position...]))
        }
        for line in lines {
            #expect(ControlServer.isUTF8(line) == (String(validating: line, as: UTF8.self) != nil), "\(line)")
        }
        #expect(ControlServer.isUTF8(Array("é".utf8)) && !ControlServer.isUTF8(ascii + [0xFF]))
    }

    /// The shared `{"ok": true}` reply is queued from its cached text: the
    /// same bytes as printing it, or an equal object of its own.
    @Test func theOKReplyIsQueuedAsItsText() {
        func queued(_ object: JSONObject, maxBytes: Int = 1024) -> [UInt8] {
            var queue = ByteQueue()
            queue.appendLine(object, maxBytes: maxBytes, cache: nil) { _ in ["replaced": true] }
            return queue.withUnsafeBytes { Array($0) }
        }
        let printed = Array((JSONValue.object(["ok": true]).jsonText + "\n").utf8)
        #expect(queued(ControlReply.ok) == printed)
        #expect(queued(["ok": true]) == printed)
        #expect(queued(ControlReply.ok, maxBytes: 11) == printed, "11 bytes of JSON fit a limit of 11")
        #expect(queued(ControlReply.ok, maxBytes: 10) == Array(#"{"replaced":true}"#.utf8 + [10]), "over the limit")
    }

    /// A line's end is found where the waiting bytes start, not in what was
    /// consumed before them, and nothing is found in an empty queue.
    @Test func theNewlineSearchLooksOnlyAtTheWaitingBytes() {
        var queue = ByteQueue()
        #expect(queue.firstOffset(of: 10) == nil)
        queue.append(contentsOf: Array("ab\ncd\n\nef".utf8))
        #expect(queue.firstOffset(of: 10) == 2)
        queue.consume(3)
        #expect(queue.firstOffset(of: 10) == 2)
        queue.consume(3)
        #expect(queue.firstOffset(of: 10) == 0)
        queue.consume(1)
        #expect(queue.firstOffset(of: 10) == nil)
        #expect(queue.firstOffset(of: UInt8(ascii: "f")) == 1)
        queue.consume(2)
        #expect(queue.isEmpty && queue.firstOffset(of: 10) == nil)
        // Past a compaction (more consumed than left), and at the last byte.
        queue.append(contentsOf: Array(repeating: UInt8(ascii: "x"), count: 100) + [10])
        queue.consume(60)
        #expect(queue.firstOffset(of: 10) == 40)
    }
}
