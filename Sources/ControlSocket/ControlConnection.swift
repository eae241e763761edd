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
///
/// Backpressure: once a client's unread replies reach the server's
/// ``ControlServer/maxPendingReplyBytes``, the connection stops reading
/// (and handling) its requests until the replies drain below half of that,
/// so a client that never reads costs a bounded amount of memory, and the
/// loop is free for other clients meanwhile.
final class ControlConnection {
    let fd: Int32
    /// Weak: the server owns its connections (a strong reference back was
    /// a cycle that kept a released server and its socket alive).
    private weak var server: ControlServer?
    /// The longest request line accepted (the server's).
    private let maxLineBytes: Int
    /// Unread reply bytes at which reading stops (the server's).
    private let maxPendingReplyBytes: Int
    private var source: FileDescriptorSource?
    /// Received bytes not yet handled: each line is consumed from the front
    /// as it is taken, before it is handled (a handler that runs the loop
    /// cannot see it twice). Both queues are changed only in this class's
    /// own short calls, on the loop thread, with no user code inside one
    /// (a reply is built before it is queued), so no access overlaps and
    /// Swift's dynamic exclusivity check is skipped: with the responder's
    /// and the reply cache's, the checks were a seventh of a request (the
    /// `query` row of Benchmarks/socket/instructions.sh).
    @exclusivity(unchecked) private var input = ByteQueue()
    @exclusivity(unchecked) private var output = ByteQueue()
    /// The buffer a request line is copied into for the server's line
    /// shortcut, kept for the next batch (``processLines()`` takes it).
    @exclusivity(unchecked) private var lineCopy: [UInt8] = []
    private var closeWhenFlushed = false
    /// Set by ``close(reason:)``: from then on nothing of this connection
    /// is processed, and its old fd number (perhaps another file's by now)
    /// is never used again.
    private(set) var isClosed = false
    /// When the client last completed a request (or connected): a partial
    /// line does not count, so a stalled request ages like silence.
    private(set) var lastActivity: LoopInstant
    private let loop: MainRunLoop

    init(fd: Int32, server: ControlServer, loop: MainRunLoop) throws(MainLoopError) {
        self.fd = fd
        self.server = server
        maxLineBytes = server.maxLineBytes
        maxPendingReplyBytes = server.maxPendingReplyBytes
        self.loop = loop
        lastActivity = loop.now
        source = try loop.addFileDescriptor(fd, interest: Self.reading, priority: .input, owner: self) { connection, ready in
            // Readable with no shutdown reported (and no error, which comes
            // as read and write): the client was there when the loop looked.
            // With replies waiting (`.write` watched too) this says nothing,
            // and the batch asks the socket as before.
            if ready.contains(.read) { connection.readable(peerWasThere: ready == .read) }
            if ready.contains(.write) { connection.flush() }
        }
    }

    /// Whether the client's unread replies have reached the bound.
    private var isBackedUp: Bool { output.count >= maxPendingReplyBytes }

    /// Whether the connection reads and handles requests now: not closed
    /// or closing, not backed up, and no later turn already scheduled.
    private var takesRequests: Bool { !isClosed && !closeWhenFlushed && !isBackedUp && !turnPending }

    /// Reads per readiness callback: a client that writes as fast as it
    /// can must not keep the loop in its callback while other clients (and
    /// the listening socket) wait; the rest is read on the next pass.
    private static let readsPerCallback = 4
    /// Requests handled per turn; more waiting lines are handled in a later
    /// turn (a job at input priority), with reading paused meanwhile, so
    /// one pipelining client cannot hold the loop for long.
    private static let linesPerTurn = 256
    /// The most capacity of ``lineCopy`` kept between batches.
    private static let keptLineCopyBytes = 4096
    /// A later turn is scheduled for lines already read.
    private var turnPending = false
    /// What a connection that takes requests watches: its requests, and
    /// the client's shutdown, which epoll reports with them when the client
    /// has closed (so a batch needs no system call to ask, ``peerWasThere``).
    private static let reading: Readiness = [.read, .peerClosed]
    /// True while a readiness callback handles what the loop found readable
    /// with no shutdown of the client's: it was there when the loop looked
    /// a moment ago, so its lines are handled without asking the socket.
    /// Anywhere else (a later turn, a backlog drained) ``peerHasClosed()``
    /// asks before a batch.
    private var peerWasThere = false

    private func readable(peerWasThere: Bool) {
        self.peerWasThere = peerWasThere
        // One send for every reply this callback produced.
        defer {
            self.peerWasThere = false
            flush()
        }
        guard let server else { return close(reason: nil) }
        // The server's buffer, shared by its connections (one callback runs
        // at a time, and each copies what it read out before handling it):
        // a buffer of its own, zeroed on every callback, cost more than
        // the requests it read.
        let buffer = server.receiveBuffer
        var reads = 0
        while takesRequests, reads < Self.readsPerCallback {
            reads += 1
            let count = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                input.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                processLines()
                // A short read took all there was: asking again would only
                // return EAGAIN (a system call a batch); the loop's next
                // pass reports what arrives meanwhile.
                if count < buffer.count { return }
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

    /// Handles complete lines until none is left, the replies back up, or
    /// the connection is closing.
    private func processLines() {
        var handled = 0
        // Loaded once per batch, not per request: a weak load is an atomic
        // operation on the side table (the socket benchmark's events rate),
        // and reading a class's `var` pays a dynamic exclusivity check.
        // Held through the batch; a server released meanwhile is gone after.
        // With the server gone, no request can be answered.
        guard let server = self.server else { return close(reason: nil) }
        let replyLimit = server.maxReplyBytes, replyText = server.replyText
        let shortcut = server.lineShortcut
        // With a shortcut, each line is copied out (into a buffer this
        // call owns: a nested call, from a handler that runs the loop,
        // finds none and makes its own) and answered from the copy, once
        // the input is released.
        var copy = lineCopy
        lineCopy = []
        // Kept for the next batch unless a long line grew it: an idle
        // connection holds a few KiB, not the longest line it ever sent.
        defer { if copy.capacity <= Self.keptLineCopyBytes { lineCopy = copy } }
        var answered = 0
        defer { if answered > 1 { lastActivity = loop.now } }
        while takesRequests, let newline = input.firstOffset(of: UInt8(ascii: "\n")) {
            guard handled < Self.linesPerTurn else { return scheduleTurn() }
            handled += 1
            // The line is read where it lies in the input; nothing runs
            // while the input is held but the pure parse.
            let line = input.withPrefix(newline) { bytes -> Line in
                var line = bytes
                if line.last == UInt8(ascii: "\r") { line = UnsafeBufferPointer(rebasing: line.dropLast()) }
                guard line.count <= maxLineBytes else { return .oversize }
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .blank }
                guard shortcut == nil else {
                    copy.removeAll(keepingCapacity: true)
                    copy.append(contentsOf: line)
                    return .copied
                }
                return .request(ControlServer.parseRequest(line))
            }
            input.consume(newline + 1)
            switch line {
            case .oversize: return rejectOversize()
            case .blank: continue
            case .request, .copied: break
            }
            // Before the first request of a batch of several: if the client
            // has gone (closed with requests unread), the lines it left are
            // not handled at all. The batch's replies are queued and go out
            // in one send (the caller flushes once), so the client is woken
            // once per batch, not once more for an early first reply. A lone
            // request needs no check: it costs one reply either way. Nor
            // does a batch the loop just found readable with the client
            // still there: a `poll` a batch is a system call a batch (the
            // socket benchmark's events rate).
            if output.isEmpty, !input.isEmpty, !peerWasThere, peerHasClosed() { return close(reason: nil) }
            // At a batch's first request (a handler that runs the loop may
            // see the idle sweep) and, after several, when it ends (the
            // `defer` above), not per request: a clock read is a vDSO call
            // per event, and an idle timeout is counted in seconds.
            if answered == 0 { lastActivity = loop.now }
            answered += 1
            let reply: JSONObject
            if let shortcut, case .copied = line {
                reply = copy.withUnsafeBufferPointer { server.respond(toLine: $0, shortcut: shortcut) }
            } else if case .request(let request) = consume line {
                reply = server.respond(to: request)
            } else {
                continue  // (oversize and blank lines were dealt with above)
            }
            enqueue(reply, limit: replyLimit, cache: replyText)
        }
        if !isClosed, !closeWhenFlushed, input.count > maxLineBytes, input.firstOffset(of: UInt8(ascii: "\n")) == nil {
            rejectOversize()
        }
    }

    /// A request line as read from the input.
    private enum Line {
        case oversize, blank
        case request(Result<JSONValue, ControlServer.RequestProblem>)
        /// Copied out for the server's line shortcut.
        case copied
    }

    /// Whether the client closed its socket: `poll` reports POLLHUP for
    /// a Unix stream socket whose peer closed both directions, even with
    /// its requests still buffered here (a client that only shut down its
    /// sending side still reads, and still gets its replies).
    private func peerHasClosed() -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&poller, 1, 0) > 0 && poller.revents & Int16(POLLHUP | POLLERR) != 0
    }

    private func scheduleTurn() {
        turnPending = true
        do {
            try loop.executeInLoop(priority: .input) { [weak self] in self?.takeTurn() }
        } catch {
            return close(reason: "cannot schedule the next requests: \(error)")
        }
        flush()  // updates the interest: no reading until the turn
    }

    private func takeTurn() {
        turnPending = false
        peerWasThere = false  // (even in a turn run by a handler inside a callback)
        guard !isClosed else { return }
        processLines()
        flush()
    }

    private func rejectOversize() {
        input.removeAll()
        reply(ControlReply.error("request line exceeds \(maxLineBytes) bytes; closing the connection"))
        closeAfterFlush()
    }

    /// The client shut down its sending side (or closed). A trailing
    /// request without a newline gets an error, then the connection closes.
    private func peerFinishedSending() {
        if input.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            input.removeAll()
            reply(ControlReply.error("incomplete request: the connection was closed before a newline"))
        }
        closeAfterFlush()
    }

    func reply(_ object: JSONObject) {
        let server = self.server
        enqueue(object, limit: server?.maxReplyBytes ?? Int.max, cache: server?.replyText)
        flush()
    }

    /// Queues a reply line (serialized once, straight into the output,
    /// bounded by the server's `maxReplyBytes`, or copied from the server's
    /// last line when it is that line's object) without sending it yet.
    private func enqueue(_ object: JSONObject, limit: Int, cache: ReplyTextCache?) {
        guard !isClosed else { return }
        output.appendLine(object, maxBytes: limit, cache: cache) { size in
            ControlReply.error("the reply would be \(size) bytes, over the limit of \(limit)")
        }
    }

    private func closeAfterFlush() {
        closeWhenFlushed = true
        flush()
    }

    /// Sends what it can, then watches for what is still needed: writable
    /// while replies wait, readable unless backed up or closing.
    private func flush() {
        guard !isClosed else { return }
        let wasBackedUp = isBackedUp
        while !output.isEmpty {
            let sent = output.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if sent > 0 {
                output.consume(sent)
                continue
            }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            // EPIPE / ECONNRESET: the client is gone; nothing more to say.
            return close(reason: nil)
        }
        if output.isEmpty && closeWhenFlushed { return close(reason: nil) }
        if wasBackedUp && output.count <= maxPendingReplyBytes / 2 && !closeWhenFlushed {
            // Drained enough: handle what was buffered, then read again.
            processLines()
            if isClosed { return }
        }
        var interest: Readiness = output.isEmpty ? [] : .write
        if takesRequests { interest.formUnion(Self.reading) }
        watch(interest)
    }

    private func watch(_ interest: Readiness) {
        guard let source, source.interest != interest else { return }
        do {
            try source.update(interest: interest)
        } catch {
            close(reason: "cannot watch the connection: \(error)")
        }
    }

    /// Tells the client why, as far as its socket takes it, and closes.
    func closeWithError(_ message: String, reason: String) {
        reply(ControlReply.error(message))
        close(reason: reason)
    }

    func close(reason: String?) {
        guard !isClosed else { return }
        isClosed = true
        input.removeAll()
        output.removeAll()
        source?.removeIfNeeded()
        source = nil
        Glibc.close(fd)
        server?.connectionClosed(self, reason: reason)
    }
}
