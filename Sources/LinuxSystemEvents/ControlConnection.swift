import EngineWire
import Glibc
import MainLoop
import MainLoopJSON

/// One client of the control socket: newline-delimited JSON in, one JSON
/// reply line per request out. Loop thread only.
///
/// Bad input never reaches past this class as anything but an error reply:
/// a line that is not JSON gets `{"ok":false,"error":...}`; a line longer
/// than the limit gets an error and the connection is closed (there is no
/// safe way to find the next request); a client that half-closes with an
/// unterminated request gets an error for it; an abrupt close or reset just
/// ends the connection.
final class ControlConnection {
    let fd: Int32
    /// Weak: the server owns its connections (a strong reference back was
    /// a cycle that kept a released server and its socket alive).
    private weak var server: ControlServer?
    /// The longest request line accepted (the server's).
    private let maxLineBytes: Int
    private var source: FileDescriptorSource?
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var closeWhenFlushed = false

    init(fd: Int32, server: ControlServer, loop: MainRunLoop) throws(MainLoopError) {
        self.fd = fd
        self.server = server
        maxLineBytes = server.maxLineBytes
        source = try loop.addFileDescriptor(fd, interest: .read, priority: .input, owner: self) { connection, ready in
            if ready.contains(.read) { connection.readable() }
            if ready.contains(.write) { connection.flush() }
        }
    }

    private func readable() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                input.append(contentsOf: buffer[0..<count])
                guard processLines() else { return }
                continue
            }
            if count == 0 {
                peerFinishedSending()
                return
            }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            close(reason: "receive failed: \(String(cString: strerror(errno)))")
            return
        }
    }

    /// Handles every complete line; false once the connection is closing.
    private func processLines() -> Bool {
        while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(input[..<newline])
            input.removeSubrange(...newline)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            guard line.count <= maxLineBytes else { return rejectOversize() }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            guard let server else { return false }
            reply(server.respond(to: String(decoding: line, as: UTF8.self)))
            if closeWhenFlushed { return false }
        }
        guard input.count <= maxLineBytes else { return rejectOversize() }
        return true
    }

    private func rejectOversize() -> Bool {
        input.removeAll()
        reply(EngineQueries.error("request line exceeds \(maxLineBytes) bytes; closing the connection"))
        closeAfterFlush()
        return false
    }

    /// The client shut down its sending side (or closed). A trailing
    /// request without a newline gets an error, then the connection closes.
    private func peerFinishedSending() {
        if input.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            input.removeAll()
            reply(EngineQueries.error("incomplete request: the connection was closed before a newline"))
        }
        closeAfterFlush()
    }

    func reply(_ object: JSONObject) {
        output.append(contentsOf: Array((JSONValue.object(object).jsonText + "\n").utf8))
        flush()
    }

    private func closeAfterFlush() {
        closeWhenFlushed = true
        try? source?.update(interest: output.isEmpty ? [] : .write)
        if output.isEmpty { close(reason: nil) }
    }

    private func flush() {
        while !output.isEmpty {
            let sent = output.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if sent > 0 {
                output.removeFirst(sent)
                continue
            }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                try? source?.update(interest: closeWhenFlushed ? .write : .readWrite)
                return
            }
            // EPIPE / ECONNRESET: the client is gone; nothing more to say.
            close(reason: nil)
            return
        }
        if closeWhenFlushed {
            close(reason: nil)
        } else {
            try? source?.update(interest: .read)
        }
    }

    func close(reason: String?) {
        guard let source else { return }
        source.removeIfNeeded()
        self.source = nil
        Glibc.close(fd)
        server?.connectionClosed(self, reason: reason)
    }
}
