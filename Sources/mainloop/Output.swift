import Glibc
import MainLoopJSON

/// Unbuffered line output: each line reaches the pipe at once (a service's
/// observations are read live by supervisors and tests).
enum Output {
    static func line(_ text: String) { write(STDOUT_FILENO, text + "\n") }
    static func error(_ text: String) { write(STDERR_FILENO, text + "\n") }
    static func json(_ object: JSONObject) { line(JSONValue.object(object).jsonText) }

    private static func write(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 { if errno == EINTR { continue } else { return } }
            offset += written
        }
    }
}
