import ServiceLogging
import Glibc
import Logging
import MainLoop
import MainLoopJSON

/// A Unix-domain control socket on the loop: newline-delimited JSON
/// requests, one JSON reply each.
///
/// The socket file is created with mode 0600 (by default) and every
/// connection's peer is checked with `SO_PEERCRED`: only the service's own
/// user (and root) may talk to it; others get an error line and are
/// disconnected. Lines are limited to ``maxLineBytes`` and connections to
/// ``maxConnections``. Loop thread only; may be released on any thread
/// (released without ``stop()``, it stops on the loop).
public final class ControlServer {
    /// The socket path.
    public let path: String
    /// The longest request line accepted.
    public let maxLineBytes: Int
    /// The most clients at once; more are refused.
    public let maxConnections: Int
    /// Unread reply bytes at which a connection stops reading its client's
    /// requests (until they drain below half of it).
    public let maxPendingReplyBytes: Int
    /// How long a connection may go without completing a request (silent,
    /// stalled mid-line, or not reading its replies) before it is closed.
    public let idleTimeout: Duration
    /// At the connection limit, a newcomer takes the place of the
    /// connection idle the longest if that one has been idle this long.
    public let evictionGrace: Duration
    /// Where connections receive (16 KiB, allocated once): each copies what
    /// it read into its own input before handling it.
    let receiveBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)
    /// Connections closed for idling past ``idleTimeout``.
    public private(set) var idleClosed = 0
    /// Connections closed to make room for a newcomer at the limit.
    public private(set) var evicted = 0
    /// Looks for idle connections while there are connections.
    private var idleSweep: LoopTimer?
    /// Times `accept` failed for want of descriptors or memory (EMFILE,
    /// ENFILE, ENOBUFS, ENOMEM); each one pauses accepting for a moment.
    public private(set) var acceptFailures = 0
    /// How long accepting pauses after such a failure: 100 ms, doubling to
    /// 2 s while failures repeat, back to 100 ms after an accept succeeds.
    private var acceptBackoff = ControlServer.firstAcceptBackoff
    private static let firstAcceptBackoff = Duration.milliseconds(100)
    private var acceptResume: LoopTimer?
    /// Lines a client can cause at loop speed (accept failures, malformed
    /// requests, refused peers, closes), each site rate-limited.
    private let acceptLog: RateLimitedLog
    private let malformedLog: RateLimitedLog
    private let refusalLog: RateLimitedLog
    private let closeLog: RateLimitedLog
    private let loop: MainRunLoop
    private let listenFD: Int32
    /// The socket file this server created (device, inode): only that file
    /// is unlinked at stop, never another server's that took the path since.
    /// Nil for an adopted socket, whose file is its maker's.
    private let socketIdentity: FileIdentity?
    /// The lock on `PATH.lock` that claims the path (``claimPath(_:)``),
    /// held until stop; nil for an adopted socket (its maker owns the path).
    private var claim: Int32?
    /// The bind's private directory, until it is removed.
    private var pendingStaging: String?
    private var listenSource: FileDescriptorSource?
    private var connections: [Int32: ControlConnection] = [:]
    /// The peers served: this user and root. An array of two: a
    /// `Set<uid_t>` costs start-up a runtime generic instantiation and a
    /// scan for `UInt32: Hashable` (with the engine's `Set<UInt32>` of
    /// pinned symbols, also gone, 0.11 million instructions).
    private let allowedUIDs: [uid_t]
    private let handler: (JSONValue) -> JSONObject
    private let logger: Logger
    /// Connections refused because of the peer's uid.
    public private(set) var refusedPeers = 0
    /// Requests that were not valid JSON.
    public private(set) var malformedRequests = 0
    /// The longest reply line sent, in bytes of JSON: a bigger reply is
    /// replaced by an error that says how big it would have been (the
    /// check is made while the reply is serialized, once). A connection
    /// reads it once per batch of requests: a change applies from the
    /// next batch.
    public var maxReplyBytes = 1 << 20
    /// The last short reply line printed, shared by the connections.
    let replyText = ReplyTextCache()
    /// Answers a request line from its bytes, before the line is parsed,
    /// or returns nil to have it parsed and handed to the handler as
    /// usual: a faster way for the requests a client sends most (the
    /// standard vocabulary's events, see `ControlResponder`), with no JSON
    /// tree made for them. It must answer a line exactly as the handler
    /// would answer its JSON, and change nothing when it returns nil.
    ///
    /// The bytes are a copy of the line (without its newline or a `\r`
    /// before it), valid for the call; the shortcut may do anything a
    /// handler may. A connection reads this once per batch of requests: a
    /// change applies from the next batch.
    public var lineShortcut: ((UnsafeBufferPointer<UInt8>) -> JSONObject?)?

    /// Creates the socket at `path` and starts accepting. A stale socket
    /// there (nobody accepts on it) is replaced; a live one (another
    /// process accepts on it) or any other kind of file is never touched:
    /// that is an error. The path is first claimed with an exclusive lock
    /// on `PATH.lock`, held until ``stop()``, so of two servers started at
    /// once on one path the second fails (`EADDRINUSE`) instead of both
    /// placing a socket.
    /// - Parameters:
    ///   - loop: the loop it serves on (its thread makes every call).
    ///   - path: where the socket file is created.
    ///   - mode: the socket file's mode.
    ///   - maxLineBytes: the longest request line accepted.
    ///   - maxConnections: the most clients at once.
    ///   - maxPendingReplyBytes: unread reply bytes at which a client's
    ///     requests stop being read.
    ///   - idleTimeout: how long a connection may go without a complete request.
    ///   - evictionGrace: at the limit, how long the idlest connection must
    ///     have been idle to make room for a newcomer.
    ///   - logger: where connection problems are logged (rate-limited).
    ///   - handler: turns a parsed request into a reply object. Answering
    ///     with the very same object as the last reply (one you keep while
    ///     what it says holds) costs a copy of its line: the server keeps
    ///     the last reply up to 1 KiB with its text.
    public convenience init(loop: MainRunLoop, path: String, mode: mode_t = 0o600, maxLineBytes: Int = 64 * 1024,
                            maxConnections: Int = 64, maxPendingReplyBytes: Int = 1 << 20,
                            idleTimeout: Duration = .seconds(60), evictionGrace: Duration = .seconds(1),
                            logger: Logger, handler: @escaping (JSONValue) -> JSONObject) throws(SocketError) {
        let claim = try Self.claimPath(path)
        let fd: Int32
        let identity: FileIdentity
        let staging: String?
        do throws(SocketError) {
            try Self.refuseLiveOrForeignFile(at: path)
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw SocketError.system(operation: "socket(AF_UNIX)", errno: errno) }
            do {
                (identity, staging) = try Self.bindAndPlace(fd, at: path, mode: mode)
            } catch {
                close(fd)
                throw error
            }
        } catch {
            Self.releaseClaim(claim, of: path)
            throw error
        }
        do {
            try self.init(loop: loop, listening: fd, path: path, identity: identity, claim: claim, maxLineBytes: maxLineBytes,
                          maxConnections: maxConnections, maxPendingReplyBytes: maxPendingReplyBytes,
                          idleTimeout: idleTimeout, evictionGrace: evictionGrace, logger: logger, handler: handler)
        } catch {
            if let staging { Self.removeStaging(staging) }
            throw error
        }
        // An empty private directory goes in the loop's first turn (or at
        // stop(), if that comes first): a service reaches READY sooner.
        guard let staging else { return }
        pendingStaging = staging
        do {
            try loop.executeInLoop(priority: .system) { [weak self] in self?.removePendingStaging() }
        } catch {
            removePendingStaging()  // a loop already shut down runs nothing
        }
    }

    private func removePendingStaging() {
        guard let staging = pendingStaging else { return }
        pendingStaging = nil
        Self.removeStaging(staging)
    }

    /// Serves on a listening socket someone else made, such as the one
    /// systemd passes by socket activation (``SocketActivation``). The
    /// socket file belongs to its maker: ``stop()`` closes the descriptor
    /// but never removes the file. `path` names it in logs and stats.
    /// - Throws: when `fileDescriptor` is not a listening Unix-domain
    ///   stream socket (nothing is closed then), or it cannot be watched.
    public convenience init(loop: MainRunLoop, adopting fileDescriptor: Int32, path: String,
                            maxLineBytes: Int = 64 * 1024, maxConnections: Int = 64,
                            maxPendingReplyBytes: Int = 1 << 20, idleTimeout: Duration = .seconds(60),
                            evictionGrace: Duration = .seconds(1),
                            logger: Logger, handler: @escaping (JSONValue) -> JSONObject) throws(SocketError) {
        try SocketActivation.checkListeningUnixStream(fileDescriptor)
        let flags = fcntl(fileDescriptor, F_GETFL)
        guard flags >= 0, fcntl(fileDescriptor, F_SETFL, flags | O_NONBLOCK) == 0,
              fcntl(fileDescriptor, F_SETFD, FD_CLOEXEC) == 0 else {
            throw .system(operation: "fcntl on the inherited socket \(fileDescriptor)", errno: errno)
        }
        try self.init(loop: loop, listening: fileDescriptor, path: path, identity: nil, claim: nil, maxLineBytes: maxLineBytes,
                      maxConnections: maxConnections, maxPendingReplyBytes: maxPendingReplyBytes,
                      idleTimeout: idleTimeout, evictionGrace: evictionGrace, logger: logger, handler: handler)
    }

    /// Starts accepting on `listenFD`, which it now owns.
    private init(loop: MainRunLoop, listening listenFD: Int32, path: String, identity: FileIdentity?, claim: Int32?,
                 maxLineBytes: Int, maxConnections: Int, maxPendingReplyBytes: Int,
                 idleTimeout: Duration, evictionGrace: Duration,
                 logger: Logger, handler: @escaping (JSONValue) -> JSONObject) throws(SocketError) {
        self.loop = loop
        self.path = path
        self.maxLineBytes = maxLineBytes
        self.maxConnections = maxConnections
        self.maxPendingReplyBytes = max(1, maxPendingReplyBytes)
        self.idleTimeout = max(.milliseconds(1), idleTimeout)
        self.evictionGrace = max(.zero, evictionGrace)
        self.logger = logger
        acceptLog = RateLimitedLog(logger: logger, loop: loop)
        malformedLog = RateLimitedLog(logger: logger, loop: loop)
        refusalLog = RateLimitedLog(logger: logger, loop: loop)
        closeLog = RateLimitedLog(logger: logger, loop: loop)
        self.handler = handler
        self.listenFD = listenFD
        self.socketIdentity = identity
        self.claim = claim
        allowedUIDs = [geteuid(), 0]
        do {
            listenSource = try loop.addFileDescriptor(listenFD, interest: .read, priority: .input, owner: self) { server, _ in
                server.acceptAll()
            }
        } catch {
            // Not serving after all: the socket must not stay behind.
            close(listenFD)
            identity?.unlinkIfStill(at: path)
            if let claim { Self.releaseClaim(claim, of: path) }
            throw .loop(error)
        }
    }

    /// Whether the socket came from elsewhere (socket activation): its file
    /// is then never removed by this server.
    public var isAdopted: Bool { socketIdentity == nil }

    deinit {
        // Connections reach the buffer through their weak reference to this
        // server, nil from now on: none reads into it again.
        receiveBuffer.deallocate()
        // Released before the loop turned: rmdir is safe from any thread.
        if let pendingStaging { Self.removeStaging(pendingStaging) }
        guard let listenSource else { return }
        // Released without stop(), perhaps on another thread: stop on the loop.
        let resources = (source: listenSource, fd: listenFD, path: path, identity: socketIdentity,
                         connections: Array(connections.values), sweep: idleSweep,
                         resume: acceptResume, claim: claim)
        loop.releaseOnLoop(resources) { resources in
            _ = resources.sweep?.cancel()
            _ = resources.resume?.cancel()
            for connection in resources.connections { connection.close(reason: nil) }
            resources.source.removeIfNeeded()
            close(resources.fd)
            resources.identity?.unlinkIfStill(at: resources.path)
            if let claim = resources.claim { ControlServer.releaseClaim(claim, of: resources.path) }
        }
    }

    /// Closes every connection and the socket, and removes the socket file.
    public func stop() {
        removePendingStaging()
        for connection in connections.values { connection.close(reason: nil) }
        _ = idleSweep?.cancel()
        _ = acceptResume?.cancel()
        guard let listenSource else { return }
        listenSource.removeIfNeeded()
        self.listenSource = nil
        close(listenFD)
        socketIdentity?.unlinkIfStill(at: path)
        if let claim { Self.releaseClaim(claim, of: path) }
        claim = nil
    }

    /// How many clients are connected.
    public var connectionCount: Int { connections.count }

    private func acceptAll() {
        while true {
            // accept4 needs _GNU_SOURCE, which Swift's Glibc module lacks.
            let fd = accept(listenFD, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            if fd < 0 {
                let error = errno
                if error == EINTR || error == ECONNABORTED { continue }
                if error == EAGAIN || error == EWOULDBLOCK { return }
                return pauseAccepting(after: error)
            }
            acceptBackoff = Self.firstAcceptBackoff
            admit(fd)
        }
    }

    private func admit(_ fd: Int32) {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            refuse(fd, "cannot read the peer's credentials")
            return
        }
        guard allowedUIDs.contains(credentials.uid) else {
            refusedPeers += 1
            refusalLog.log(.warning, "control socket: refused a connection from uid \(credentials.uid) (pid \(credentials.pid))")
            refuse(fd, "permission denied: uid \(credentials.uid) may not control this service")
            return
        }
        guard connections.count < maxConnections || evictLongestIdle() else {
            refuse(fd, "too many connections (limit \(maxConnections)), none idle for \(evictionGrace); try again")
            return
        }
        do {
            connections[fd] = try ControlConnection(fd: fd, server: self, loop: loop)
            armIdleSweep()
        } catch {
            refuse(fd, "cannot watch the connection: \(error)")
        }
    }

    /// Best-effort error line, then close.
    private func refuse(_ fd: Int32, _ message: String) {
        let line = Array((JSONValue.object(ControlReply.error(message)).jsonText + "\n").utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(fd)
    }

    /// `accept` failed for want of resources: the pending connection stays
    /// queued and the listening socket stays readable, so accepting again
    /// at once would spin. Stop watching it for the backoff, then resume.
    private func pauseAccepting(after error: Int32) {
        acceptFailures += 1
        acceptLog.log(.warning, """
            control socket: accept failed: \(String(cString: strerror(error))); \
            pausing accepts for \(acceptBackoff)
            """)
        guard let listenSource else { return }
        do {
            try listenSource.update(interest: [])
        } catch {
            logger.error("control socket: cannot pause accepting: \(error)")
            return
        }
        if acceptResume == nil {
            acceptResume = loop.makeTimer { [weak self] in self?.resumeAccepting() }
        }
        acceptResume?.schedule(after: acceptBackoff)
        acceptBackoff = min(acceptBackoff * 2, .seconds(2))
    }

    private func resumeAccepting() {
        guard let listenSource, !listenSource.isRemoved else { return }
        do {
            try listenSource.update(interest: .read)
        } catch {
            logger.error("control socket: cannot resume accepting: \(error)")
        }
    }

    /// At the limit: closes the connection idle the longest, if it has been
    /// idle for ``evictionGrace``, so a supervisor always gets in.
    private func evictLongestIdle() -> Bool {
        guard let oldest = connections.values.min(by: { $0.lastActivity < $1.lastActivity }),
              loop.now - oldest.lastActivity >= evictionGrace else { return false }
        evicted += 1
        oldest.closeWithError("closed to make room for another client: idle while the connection limit was reached",
                              reason: "evicted (idle at the connection limit)")
        return true
    }

    /// Sweeps for idle connections every quarter of the timeout (at most a
    /// second apart) while there are any.
    private func armIdleSweep() {
        if idleSweep == nil {
            idleSweep = loop.makeTimer { [weak self] in self?.closeIdleConnections() }
        }
        guard let idleSweep, !idleSweep.isScheduled else { return }
        let interval = min(.seconds(1), idleTimeout / 4)
        idleSweep.schedule(after: interval, repeating: interval)
    }

    private func closeIdleConnections() {
        let now = loop.now
        for connection in connections.values where now - connection.lastActivity >= idleTimeout {
            idleClosed += 1
            connection.closeWithError("closed: no complete request for \(idleTimeout)", reason: "idle timeout")
        }
        if connections.isEmpty { _ = idleSweep?.cancel() }
    }

    func connectionClosed(_ connection: ControlConnection, reason: String?) {
        connections[connection.fd] = nil
        if let reason { closeLog.log(.info, "control connection closed: \(reason)") }
    }

    /// Reads one request line (in place: `line` may point into a receive
    /// queue) into its JSON, or says why it cannot be read. A line that is
    /// not valid UTF-8 is refused whole: decoded lossily, two different ids
    /// (`a\xff`, `a\xfe`) would become the same one (`a\u{FFFD}`).
    /// Nothing here has an effect: a connection parses a line while it
    /// holds its input, and answers it (``respond(to:)``) after.
    static func parseRequest(_ line: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, RequestProblem> {
        guard isUTF8(line) else { return .failure(RequestProblem(message: "the request is not valid UTF-8")) }
        do {
            return .success(try JSONValue.parse(utf8: line))
        } catch {
            return .failure(RequestProblem(message: "malformed JSON request: \(error)"))
        }
    }

    /// Why a request line cannot be read.
    struct RequestProblem: Error {
        let message: String
    }

    /// The reply to a request line, from `shortcut` (the server's
    /// ``lineShortcut``, read once per batch) when it answers, else from
    /// the handler, the line parsed.
    func respond(toLine line: UnsafeBufferPointer<UInt8>,
                 shortcut: (UnsafeBufferPointer<UInt8>) -> JSONObject?) -> JSONObject {
        shortcut(line) ?? respond(to: Self.parseRequest(line))
    }

    /// The reply to a request line read by ``parseRequest(_:)``.
    func respond(to request: Result<JSONValue, RequestProblem>) -> JSONObject {
        switch request {
        case .success(let json): return handler(json)
        case .failure(let problem): return malformed(problem.message)
        }
    }

    /// Whether the bytes of an array are UTF-8 (as the buffer form).
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isUTF8($0) }
    }

    /// Whether `bytes` are UTF-8: eight bytes at a time while they are
    /// ASCII (requests almost always are), the full check only past that.
    static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0, high: UInt64 = 0
        while offset + 8 <= raw.count {
            high |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < raw.count {
            high |= UInt64(raw[offset])
            offset += 1
        }
        return high & 0x8080_8080_8080_8080 == 0 || String(validating: bytes, as: UTF8.self) != nil
    }

    /// Counts, logs (rate-limited) and answers a request that cannot be read.
    private func malformed(_ problem: String) -> JSONObject {
        malformedRequests += 1
        malformedLog.log(.notice, "control socket: malformed request: \(problem)")
        return ControlReply.error(problem)
    }
}

/// `struct ucred` (pid, uid, gid), which Swift's Glibc module hides behind
/// _GNU_SOURCE; same layout, filled by `getsockopt(SO_PEERCRED)`.
struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension ControlServer: Sendable {}
