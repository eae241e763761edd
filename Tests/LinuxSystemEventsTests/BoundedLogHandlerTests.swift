import Glibc
import Logging
import ServiceLogging
import Testing
import TestSupport

/// The service's log lines: timestamp, level, label, the metadata sorted by
/// key, the message.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct BoundedLogHandlerTests {
    @Test func metadataIsWrittenSortedByKeyBeforeTheMessage() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let pump = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20)
        var handler = BoundedLogHandler(label: "svc", pump: pump)
        handler.metadata = ["b": "2", "a": "1"]
        handler.log(event: LogEvent(level: .info, message: "with fields", metadata: ["c": "3", "a": "overridden"],
                                    source: "test", file: #fileID, function: #function, line: #line))
        handler.metadata = [:]
        handler.log(event: LogEvent(level: .warning, message: "without", metadata: nil,
                                    source: "test", file: #fileID, function: #function, line: #line))
        #expect(pump.finish(within: .seconds(5)) == 0)
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = read(fds[0], &buffer, buffer.count), count > 0 { bytes += buffer[0..<count] }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map {
            // Past the timestamp.
            String($0.drop { $0 != " " }.dropFirst())
        }
        #expect(lines == ["info svc : a=overridden b=2 c=3 with fields", "warning svc : without"])
    }
}
