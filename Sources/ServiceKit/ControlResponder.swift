import AppLifecycle
import ControlSocket
import EngineWire
import Glibc
import Logging
import MainLoop
import MainLoopJSON
import SystemNotifications

/// The standard request vocabulary of the control socket for any
/// application: lifecycle commands, system events, input and queries
/// (docs/BEHAVIOUR.md, "The request vocabulary"), so `mainloop ctl` drives
/// your service as it drives `mainloop run`.
///
/// ```swift
/// let responder = ControlResponder(application: application)
/// let server = try responder.serve(path: "/run/my-service/control.sock", logger: logger)
/// // keep `server`: releasing it (on the loop thread) closes the socket
/// ```
///
/// Every request takes effect before its reply is made (`ok` means
/// applied); nothing a client sends throws or changes anything when it is
/// refused. Loop thread only.
public final class ControlResponder {
    /// The application the requests drive.
    public let application: Application
    /// The largest reply, in bytes of JSON; a bigger one is refused with an
    /// error that says so. Given to the server by ``serve(path:mode:passed:logger:)``
    /// (set ``/ControlSocket/ControlServer/maxReplyBytes`` yourself on a
    /// server you made).
    public var maxReplyBytes: Int
    /// More counters for a `stats` reply (your own, or an output queue's).
    public var extraStats: () -> JSONObject = { JSONObject() }
    /// The metrics as Prometheus text for the `metrics` query (set by
    /// whoever collects them, e.g. MainLoopMetrics); nil: the query is
    /// answered with an error that says so.
    public var metricsText: (() -> String)?
    /// The server whose counters a `stats` reply includes (set by
    /// ``serve(path:mode:passed:logger:)``, or by you for a server you made).
    public weak var server: ControlServer?
    /// The last `state` reply and what it reports: a query that finds
    /// nothing changed answers with the very same object, so the connection
    /// copies the line it printed for it (a supervisor polls `state`; the
    /// reply is built, printed and destroyed once per change, not per
    /// query). Unchecked exclusivity: touched only inside ``handle(_:)`` on
    /// the loop thread, which nothing re-enters while it runs.
    /// (Two fields, compared in place: one optional pair was copied out and
    /// destroyed through value witnesses on every query: the socket
    /// benchmark's state rows.)
    @exclusivity(unchecked) private var lastStateSnapshot: EngineStateSnapshot?
    @exclusivity(unchecked) private var lastStateReply = JSONObject()
    /// Reads the plain `system` lines (``answer(line:)``). Unchecked
    /// exclusivity: changed only inside ``answer(line:)``, before the
    /// event is posted (no user code runs while it is changed). The checks'
    /// cost: the rows of Benchmarks/socket/instructions.sh.
    @exclusivity(unchecked) private var eventLines: SystemEventLineReader
    /// The application's notification center, kept: made per event, the
    /// center retained and released the application each time, on the
    /// slow path of an object with weak references.
    private let center: SystemNotificationCenter

    /// A responder for `application`'s lifecycle and notification center.
    public init(application: Application, maxReplyBytes: Int = 1 << 20) {
        self.application = application
        self.maxReplyBytes = maxReplyBytes
        center = application.notifications
        eventLines = SystemEventLineReader(center: center)
    }

    /// Opens the control socket and answers on it: the socket systemd
    /// passed (socket activation, named `control` or the only one) when
    /// `path` is nil, else `path`, else the default path
    /// (``/ControlSocket/DefaultSocketPath/resolve(creating:)``).
    /// - Parameters:
    ///   - path: the socket file to bind; nil: the passed socket, else the default path.
    ///   - mode: the socket file's mode when it is bound here.
    ///   - passed: the sockets systemd passed; read them once, at start,
    ///     with ``/ControlSocket/SocketActivation/takePassedSockets()``
    ///     (which removes the variables), before anything that may fork.
    ///   - logger: where the server logs (connections refused, errors).
    /// - Returns: the server; it lives as long as you hold it, and holds
    ///   this responder (releasing it on the loop thread closes the socket).
    /// - Throws: when the socket cannot be opened (the error names the path).
    public func serve(path: String?, mode: mode_t = 0o600, passed: [SocketActivation.PassedSocket] = [],
                      logger: Logger) throws -> ControlServer {
        // The server holds what answers its requests (a responder made
        // inline keeps answering); the responder holds the server weakly.
        let handler: (JSONValue) -> JSONObject = { request in self.handle(request) }
        let shortcut: (UnsafeBufferPointer<UInt8>) -> JSONObject? = { line in self.answer(line: line) }
        if path == nil, let inherited = try SocketActivation.controlSocket(in: passed) {
            return try makeServer(adopting: inherited, path: SocketActivation.boundPath(of: inherited), mode: mode,
                                  logger: logger, handler: handler, shortcut: shortcut)
        }
        return try makeServer(adopting: nil, path: path ?? DefaultSocketPath.resolve(creating: true), mode: mode,
                              logger: logger, handler: handler, shortcut: shortcut)
    }

    /// Serves `inherited` (a listening socket someone else made, named
    /// `path` in logs) or binds `path`, with `handler` answering (and
    /// `shortcut` answering the lines it can, see ``answer(line:)``), this
    /// responder's reply bound, and the server's counters in `stats`.
    @_spi(Tool) public func makeServer(adopting inherited: Int32?, path: String, mode: mode_t, logger: Logger,
                    handler: @escaping (JSONValue) -> JSONObject,
                    shortcut: @escaping (UnsafeBufferPointer<UInt8>) -> JSONObject?) throws -> ControlServer {
        let loop = application.loop
        let made: ControlServer
        if let inherited {
            made = try ControlServer(loop: loop, adopting: inherited, path: path, logger: logger, handler: handler)
        } else {
            made = try ControlServer(loop: loop, path: path, mode: mode, logger: logger, handler: handler)
        }
        made.maxReplyBytes = maxReplyBytes
        made.lineShortcut = shortcut
        server = made
        return made
    }

    /// Answers one control request. Never throws: every problem becomes an
    /// error reply, and a refused request changes nothing.
    public func handle(_ request: JSONValue) -> JSONObject {
        guard let object = request.objectValue else {
            return EngineQueries.error("a request is a JSON object with exactly one of lifecycle, system, input, query")
        }
        let decoded: EngineRequest
        do {
            decoded = try RequestDecoder.decode(object, context: .controlSocket)
        } catch {
            return EngineQueries.error(error.problem)
        }
        switch consume decoded {
        case .lifecycle(let command):
            do {
                try application.perform(command)
                return JSONObject(distinctKeys: [.init("ok", true), .init("state", .string(application.state.rawValue))])
            } catch {
                return EngineQueries.error(error.description)
            }
        case .system(let json):
            let event: SystemEvent
            do {
                event = try center.decodeEvent(json)
            } catch {
                return EngineQueries.error("\(error)")
            }
            return answer { try center.post(event) }
        case .input(let id):
            do {
                let discardedBefore = application.discardedInputCount
                try application.deliverInput(id)
                guard application.discardedInputCount == discardedBefore else {
                    // Accepted and applied, but the app was not active: say so.
                    return ["ok": true, "discarded": true,
                            "reason": .string("the app is \(application.state.rawValue); input reaches only an active app")]
                }
                return ControlReply.ok
            } catch {
                return EngineQueries.error("\(error)")
            }
        case .query(.metrics):
            guard let metricsText else { return EngineQueries.reply(.metrics, application: application) }
            // The server bounds the reply's size while writing it.
            return ["ok": true, "text": .string(metricsText())]
        case .query(.state):
            return stateReply()
        case .query(let query):
            // Stats are built only when asked; the server bounds the
            // reply's size while writing it (serialized once).
            return EngineQueries.reply(query, application: application, extraStats: query == .stats ? controlStats() : JSONObject())
        case .app:
            return EngineQueries.error("'app' actions are scenario steps, not control requests")
        }
    }

    /// Answers a request line of the plain `system` form
    /// (``/EngineWire/SystemEventLine``) from its bytes, with no JSON tree
    /// made for it: posts its event and answers as ``handle(_:)`` answers
    /// the line's JSON. Returns nil, having changed nothing, for any other
    /// line, and for an event that does not decode: parse that line and
    /// call ``handle(_:)``, which words the error. A server made by
    /// ``serve(path:mode:passed:logger:)`` answers so
    /// (``/ControlSocket/ControlServer/lineShortcut``).
    public func answer(line: UnsafeBufferPointer<UInt8>) -> JSONObject? {
        // Read (the reader changes) before posting (user code runs).
        switch eventLines.event(in: line) {
        case .prepared(let event): return answer { try center.post(event) }
        case .decoded(let event): return answer { try center.post(event) }
        case .unread: return nil
        }
    }

    /// The reply to posting an event: `ok`, or the error that refused it.
    private func answer(posting post: () throws -> Void) -> JSONObject {
        do {
            try post()
            return ControlReply.ok
        } catch {
            return EngineQueries.error("\(error)")
        }
    }

    /// The `state` reply: the last one again while what it reports is the same.
    private func stateReply() -> JSONObject {
        let snapshot = EngineStateSnapshot(application: application)
        if lastStateSnapshot == snapshot { return lastStateReply }
        lastStateSnapshot = snapshot
        lastStateReply = snapshot.reply
        return lastStateReply
    }

    /// The socket's counters and ``extraStats``, for a `stats` reply.
    private func controlStats() -> JSONObject {
        var stats = JSONObject()
        if let server {
            stats = ["refusedPeers": .number(Double(server.refusedPeers)),
                     "malformedRequests": .number(Double(server.malformedRequests)),
                     "acceptFailures": .number(Double(server.acceptFailures)),
                     "idleClosed": .number(Double(server.idleClosed)),
                     "evicted": .number(Double(server.evicted))]
        }
        for (key, value) in extraStats() { stats[key] = value }
        return stats
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension ControlResponder: Sendable {}
