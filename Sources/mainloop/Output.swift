import Glibc
import MainLoopJSON

/// Unbuffered line output: each line reaches the pipe at once (a service's
/// observations are read live by supervisors and tests).
enum Output {
    static func line(_ text: String) { write(STDOUT_FILENO, text + "\n") }
    static func error(_ text: String) { write(STDERR_FILENO, text + "\n") }
    static func json(_ object: JSONObject) { line(JSONValue.object(object).jsonText) }

    /// Lines gathered into writes of about 64 KiB: for output that nobody
    /// reads live (a replay of a million lines makes a few hundred writes,
    /// not a million). ``flush()`` writes what is gathered; call it at the
    /// end (the replay does, in a `defer`, so an error keeps what came before).
    final class Batched {
        private var pending: [UInt8] = []

        func line(_ text: String) {
            pending.append(contentsOf: text.utf8)
            pending.append(UInt8(ascii: "\n"))
            if pending.count >= 64 * 1024 { flush() }
        }

        func flush() {
            Output.write(STDOUT_FILENO, pending)
            pending.removeAll(keepingCapacity: true)
        }
    }

    private static func write(_ fd: Int32, _ text: String) {
        write(fd, Array(text.utf8))
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 { if errno == EINTR { continue } else { return } }
            offset += written
        }
    }
}
