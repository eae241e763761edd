import AppLifecycle
import ControlSocket
import EngineWire
import Glibc
import Logging
import MainLoop
import MainLoopJSON
import SystemNotifications

/// The standard request vocabulary of the control socket for any
/// application: lifecycle commands, system events, input, app actions and
/// queries (docs/BEHAVIOUR.md §6), so `mainloop ctl` drives your service as
/// it drives `mainloop run`. It reads the socket's requests and words the
/// replies; a ``/EngineWire/RequestInterpreter`` carries them out, the
/// interpreter the replay uses.
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
    /// What carries out the requests (the one interpreter of the
    /// vocabulary, which the replay uses too).
    public let interpreter: RequestInterpreter
    /// The application the requests drive.
    public var application: Application { interpreter.application }
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
    public var metricsText: (() -> String)? {
        get { interpreter.metricsText }
        set { interpreter.metricsText = newValue }
    }
    /// The server whose counters a `stats` reply includes (set by
    /// ``serve(path:mode:passed:logger:)``, or by you for a server you made).
    public weak var server: ControlServer?

    /// A responder for `application`'s lifecycle and notification center.
    /// App actions are refused: they act for a recorded app
    /// (``init(interpreter:maxReplyBytes:)`` with a recorder).
    public convenience init(application: Application, maxReplyBytes: Int = 1 << 20) {
        self.init(interpreter: RequestInterpreter(application: application), maxReplyBytes: maxReplyBytes)
    }

    /// A responder answering through `interpreter`. A `stats` reply has
    /// the interpreter's `extraStats`, the server's counters and
    /// ``extraStats``.
    public init(interpreter: RequestInterpreter, maxReplyBytes: Int = 1 << 20) {
        self.interpreter = interpreter
        self.maxReplyBytes = maxReplyBytes
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
            return EngineQueries.error("a request is a JSON object with exactly one of lifecycle, system, input, memoryWarning, app, query")
        }
        let decoded: EngineRequest
        do {
            decoded = try RequestDecoder.decode(object, context: .controlSocket)
        } catch {
            return EngineQueries.error(error.problem)
        }
        // A query is answered as it is (no outcome wrapped around it: a
        // supervisor polls `state`, the socket benchmark's state rows).
        if case .query(let query) = decoded {
            return query == .stats ? interpreter.statsAnswer(adding: controlStats()) : interpreter.answer(query)
        }
        do throws(RequestInterpreter.Failure) {
            return reply(to: try interpreter.perform(decoded))
        } catch {
            return EngineQueries.error(error.description)
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
        switch interpreter.post(eventLine: line) {
        case .posted: return ControlReply.ok
        case .failed(let failure): return EngineQueries.error(failure.description)
        case .notAnEventLine: return nil
        }
    }

    /// The reply that says what a request did.
    private func reply(to outcome: RequestInterpreter.Outcome) -> JSONObject {
        switch outcome {
        case .lifecycle(let state):
            return JSONObject(distinctKeys: [.init("ok", true), .init("state", .string(state.rawValue))])
        case .posted, .action, .input(discarded: false):
            return ControlReply.ok
        case .input(discarded: true):
            // Accepted and applied, but the app was not active: say so.
            return ["ok": true, "discarded": true,
                    "reason": .string("the app is \(application.state.rawValue); input reaches only an active app")]
        case .answer(let answer):
            return answer
        }
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
