import EngineWire
import Glibc
import Logging
import MainLoop
import MainLoopJSON
import MainLoopKit
import Testing
import TestSupport

/// Lines answered from their bytes: a responder reads the plain
/// `system` form itself (`ControlResponder.answer(line:)`), and a server
/// hands each line to its `lineShortcut` before parsing it. A line read so
/// must be answered exactly as its parsed JSON is, with the same effects,
/// and any other line must be left, unchanged, to the parsed path.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct LineShortcutTests {
    /// One application driven one way: its responder, and the lines its
    /// recorder printed.
    final class Side {
        let loop: MainRunLoop
        let application: Application
        let responder: ControlResponder
        var observations: [String] = []
        let recorder: ObservationRecorder

        init() throws {
            loop = try MainRunLoop(deterministic: true)
            application = try Application(loop: loop)
            responder = ControlResponder(application: application)
            var lines: [String] = []
            recorder = ObservationRecorder(timestamp: { ["at": 1] }, lineSink: { lines.append(String(decoding: $0, as: UTF8.self)) })
            try recorder.attach(to: application)
            try application.perform(.launch)
            try loop.runUntilIdle()
            recorderLines = { let taken = lines; lines.removeAll(); return taken }
        }

        /// The lines recorded since the last call.
        var recorderLines: () -> [String] = { [] }

        /// The reply the parsed path gives `line` (the server's words for
        /// a line that is not JSON).
        func parsedReply(_ line: [UInt8]) -> String {
            let reply: JSONObject
            do {
                reply = responder.handle(try JSONValue.parse(utf8: line))
            } catch {
                reply = ["ok": false, "error": "malformed"]
            }
            return JSONValue.object(reply).jsonText
        }
    }

    /// The lines: every standard kind with each of its cases and with
    /// values of every other shape, in plain and spaced writing, wrapped
    /// wrongly, and mutated at random (seeded), among lifecycle commands
    /// that suspend and resume the app (so events are held and merged).
    static func corpus() throws -> [String] {
        let probe = try Side()
        var kinds = probe.application.notifications.kinds.map(\.name)
        kinds += ["nope", "", "Orientation", "orient\\u0061tion"]
        var lines: [String] = []
        for kind in kinds {
            var values = ["true", "false", "null", "0.5", "1", "-1", "1e400", "01", "1.", "\"x\"", "\"\"", "[1]", "{}",
                          "\"a\\u0041\"", "\"\u{e9}t\u{e9}\"", "nul", "tru", "-", "1e", "\"faceUp", "\"a\tb\""]
            if let kind = probe.application.notifications.kinds.first(where: { $0.name == kind }),
               let cases = try probe.application.notifications.rule(for: kind).enumeratedValues {
                values += cases.map { "\"\($0)\"" }
            }
            for value in values {
                lines.append(#"{"system":{"\#(kind)":\#(value)}}"#)
                lines.append(" {\t\"system\" : { \"\(kind)\" :\(value) } } \r")
                lines.append(#"{"system":{"\#(kind)":\#(value)}"#)
                lines.append(#"{"system":{"\#(kind)":\#(value)}}}"#)
                lines.append(#"{"system":{"\#(kind)":\#(value),"\#(kind)":\#(value)}}"#)
                lines.append(#"{"system":{"\#(kind)":\#(value)},"query":"state"}"#)
                lines.append(#"{"System":{"\#(kind)":\#(value)}}"#)
                lines.append(#"[{"system":{"\#(kind)":\#(value)}}]"#)
                lines.append(#"{"system":{"\#(kind)":\#(value)}} x"#)
            }
        }
        // Byte edits of the plain lines: whatever the reader accepts of
        // them must mean what the parser reads.
        var generator = SeededGenerator(seed: 21)
        let alphabet = Array(#"{}[]":,\ 0123456789.eE+-tfnulsryo"#.utf8) + [0x09, 0x0D, 0x00, 0x80, 0xC3, 0x7F]
        let plain = lines.filter { $0.hasPrefix(#"{"system":{""#) }
        for _ in 0..<4000 {
            var bytes = Array(plain[Int.random(in: 0..<plain.count, using: &generator)].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                let byte = alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = byte
                case 1: bytes.insert(byte, at: at)
                default: if bytes.count > 1 { bytes.remove(at: at) }
                }
            }
            lines.append(String(decoding: bytes, as: UTF8.self))
        }
        // Suspend and resume among the events, so some are held and merged.
        var mixed: [String] = []
        for (index, line) in lines.enumerated() {
            mixed.append(line)
            if index % 97 == 0 { mixed.append(#"{"lifecycle":"home"}"#) }
            if index % 97 == 40 { mixed.append(#"{"lifecycle":"foreground"}"#) }
        }
        return mixed
    }

    /// Every line of the corpus, sent to two applications: to one parsed,
    /// to the other through `answer(line:)` first. The replies, the
    /// observation lines and the final state are the same; the reader
    /// answers the plain lines and only those.
    @Test func theReaderAnswersEveryLineAsTheParsedPathDoes() throws {
        let parsed = try Side(), read = try Side()
        var answeredByReader = 0
        for line in try Self.corpus() {
            let bytes = Array(line.utf8)
            let expected = parsed.parsedReply(bytes)
            let shortcut = bytes.withUnsafeBufferPointer { read.responder.answer(line: $0) }
            let got = shortcut.map { JSONValue.object($0).jsonText } ?? read.parsedReply(bytes)
            if shortcut != nil { answeredByReader += 1 }
            #expect(got == expected, "\(line)")
            try parsed.loop.runUntilIdle()
            try read.loop.runUntilIdle()
            #expect(read.recorderLines() == parsed.recorderLines(), "\(line)")
            let isPlain = bytes.withUnsafeBufferPointer { SystemEventLine($0) != nil }
            if !isPlain { #expect(shortcut == nil, "\(line)") }
            if isPlain && expected.hasPrefix(#"{"ok":true"#) { #expect(shortcut != nil, "\(line)") }
        }
        // (Most of the corpus is refused: the plain lines that are
        // events of the unkeyed kinds with a value they take are 53.)
        #expect(answeredByReader >= 53)
        let state = ["query": "state"] as JSONValue, stats = ["query": "stats"] as JSONValue
        #expect(read.responder.handle(state) == parsed.responder.handle(state))
        #expect(JSONValue.object(read.responder.handle(stats)).jsonText == JSONValue.object(parsed.responder.handle(stats)).jsonText)
    }

    /// Whatever `SystemEventLine` reads of a line is what the JSON parser
    /// reads: `{"system": {kind: value}}`, nothing more or less.
    @Test func aLineReadFromItsBytesIsTheLineTheParserReads() throws {
        var read = 0
        for line in try Self.corpus() {
            let bytes = Array(line.utf8)
            guard let parts = bytes.withUnsafeBufferPointer({ SystemEventLine($0) }).map({
                (name: String(decoding: $0.kindName, as: UTF8.self), value: $0.value, text: Array($0.valueText))
            }) else { continue }
            read += 1
            let json = try JSONValue.parse(utf8: bytes)
            #expect(json == ["system": .object([parts.name: parts.value])], "\(line)")
            #expect(try JSONValue.parse(utf8: parts.text) == parts.value, "\(line)")
        }
        #expect(read >= 300)  // (337 of the corpus)
    }

    /// What a reader keeps is bounded by the kinds' cases: numbers and
    /// free strings, however many, are decoded each time, never kept.
    @Test func aReaderKeepsOnlyTheFixedValuesOfEachKind() throws {
        let side = try Side()
        var reader = SystemEventLineReader(center: side.application.notifications)
        for index in 0..<5000 {
            for line in [#"{"system":{"batteryLevel":0.\#(index)}}"#, #"{"system":{"locale":"l\#(index)"}}"#,
                         #"{"system":{"orientation":"\#(index % 2 == 0 ? "faceUp" : "portrait")"}}"#,
                         #"{"system":{"proximity":\#(index % 2 == 0)}}"#] {
                let center = side.application.notifications
                switch Array(line.utf8).withUnsafeBufferPointer({ reader.event(in: $0) }) {
                case .prepared(let event): try center.post(event)
                case .decoded(let event): try center.post(event)
                case .unread: Issue.record("not read: \(line)")
                }
            }
        }
        #expect(reader.keptEventCount == 4)  // two orientations, true and false
        #expect(reader.resolvedKindCount == 4)
    }
}

/// A server's `lineShortcut`: the lines it answers are answered by it
/// alone, in their place among the others; the lines it declines are
/// parsed and handled as without it.
///
/// The time limit is a hang guard, not a duration.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct ServerLineShortcutTests {
    @Test func aShortcutAnswersItsLinesInOrderAndLeavesTheRestToTheHandler() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop(deterministic: true)
        var handled: [JSONValue] = []
        let server = try ControlServer(loop: loop, path: directory.file("c.sock"), logger: Logger(label: "test")) { request in
            handled.append(request)
            return ["via": "handler"]
        }
        defer { server.stop() }
        server.lineShortcut = { line in
            let text = String(decoding: line, as: UTF8.self)
            return text.hasPrefix(#"{"fast""#) ? ["via": "shortcut", "line": .string(text)] : nil
        }
        let client = try RawClient(path: server.path)
        defer { client.close() }
        try loop.runUntilIdle()  // accepted
        client.sendWithoutBlocking(Array(#"{"fast":1}"#.utf8) + [0x0D, 0x0A] + Array(#"{"slow":2}"#.utf8) + [0x0A, 0x20, 0x0A]
            + Array(#"{"fast":3}"#.utf8) + [0x0A] + Array("not json".utf8) + [0x0A])
        try loop.runUntilIdle()
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(client.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        let replies = String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(replies.count == 4, "\(replies)")
        guard replies.count == 4 else { return }
        #expect(replies[0] == #"{"via":"shortcut","line":"{\"fast\":1}"}"#)
        #expect(replies[1] == #"{"via":"handler"}"#)
        #expect(replies[2] == #"{"via":"shortcut","line":"{\"fast\":3}"}"#)
        #expect(replies[3].hasPrefix(#"{"ok":false,"error":"malformed JSON request"#), "\(replies[3])")
        #expect(handled == [["slow": 2]])
        #expect(server.malformedRequests == 1)
    }
}

/// A small deterministic generator (SplitMix64), so a failure repeats.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
