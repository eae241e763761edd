import CSystemd
import FileSupport
import Glibc
import MainLoop

/// A D-Bus connection driven by a ``/MainLoop/MainRunLoop``: sd-bus (from
/// libsystemd) does the protocol, the loop does the waiting. The bus's
/// descriptor is an fd source whose interest follows `sd_bus_get_events`,
/// a loop timer follows `sd_bus_get_timeout` (absolute CLOCK_MONOTONIC µs),
/// and `sd_bus_process` runs until it has nothing left, re-querying both
/// after every process and every send.
///
/// Only asynchronous calls: a reply, a signal or a timeout each arrive as a
/// callback on the loop thread, so a slow or dead daemon never blocks the
/// loop (calls time out after their `timeout`). When the connection breaks,
/// every pending call gets ``DBusError/disconnected`` and ``onDisconnect``
/// is called once. Real-clock loops only; loop thread only.
public final class SystemBusConnection {
    /// The loop that drives the connection.
    public let loop: MainRunLoop
    /// What the connection was opened to, for logs.
    public let address: String
    /// Called once when the connection breaks (the bus went away).
    public var onDisconnect: ((DBusError) -> Void)?

    /// The sd-bus connection; nil once closed.
    private var bus: OpaquePointer?
    private var source: FileDescriptorSource?
    private var timer: LoopTimer?
    private var interest: Readiness = .read
    /// Messages processed per loop callback before yielding to other work
    /// (a daemon flooding signals cannot starve the loop).
    private static let batch = 64

    /// Opens the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else
    /// `unix:path=/run/dbus/system_bus_socket`), or `address` when given,
    /// and starts its handshake on the loop.
    /// - Throws: ``DBusError/invalidAddress(address:problem:)`` for an
    ///   address that is not one; ``DBusError/system(operation:errno:)``
    ///   when there is no bus to connect to (ENOENT, ECONNREFUSED) or it
    ///   cannot be watched;
    ///   ``DBusError/libraryUnavailable(_:)`` when libsystemd cannot be
    ///   loaded (the first connection opens it).
    public init(loop: MainRunLoop, address: String? = nil) throws(DBusError) {
        loop.preconditionInLoop()
        try SystemdLibrary.load()
        self.loop = loop
        let address = address ?? ProcessEnvironment.value("DBUS_SYSTEM_BUS_ADDRESS")
        self.address = address ?? "unix:path=/run/dbus/system_bus_socket"
        if let problem = DBusSyntax.addressProblem(self.address) {
            throw .invalidAddress(address: self.address, problem: problem)
        }
        var opened: OpaquePointer?
        if let address {
            var made: OpaquePointer?
            var result = CSystemd_sd_bus_new(&made)
            guard result >= 0, let made else { throw .system(operation: "sd_bus_new", errno: -result) }
            result = CSystemd_sd_bus_set_address(made, address)
            if result >= 0 { result = CSystemd_sd_bus_set_bus_client(made, 1) }
            if result >= 0 { result = CSystemd_sd_bus_start(made) }
            guard result >= 0 else {
                CSystemd_sd_bus_close_unref(made)
                throw .system(operation: "connecting to \(address)", errno: -result)
            }
            opened = made
        } else {
            let result = CSystemd_sd_bus_open_system(&opened)
            guard result >= 0, opened != nil else { throw .system(operation: "connecting to the system bus \(self.address)", errno: -result) }
        }
        bus = opened
        let descriptor = CSystemd_sd_bus_get_fd(opened)
        do {
            source = try loop.addFileDescriptor(descriptor, interest: .read, priority: .input, owner: self) { connection, _ in
                connection.process()
            }
        } catch {
            CSystemd_sd_bus_close_unref(opened)
            bus = nil
            throw .system(operation: "watching the bus descriptor (\(error))", errno: EINVAL)
        }
        timer = loop.makeTimer { [weak self] in self?.process() }
        updateWatch()
    }

    deinit {
        // On the loop thread: closing the bus runs the pending calls'
        // handlers (with `.disconnected`), and they are loop-bound code.
        // No flush: a slow daemon must not block whoever releases this.
        loop.releaseOnLoop((bus, source, timer)) { resources in
            resources.1?.removeIfNeeded()
            resources.2?.cancel()
            if let bus = resources.0 { CSystemd_sd_bus_close_unref(bus) }
        }
    }

    /// Whether the connection is open.
    public var isOpen: Bool { bus != nil }

    /// The connection's unique name on the bus (`:1.42`), once the bus has
    /// given it one; nil before the handshake ends and after a close.
    public var uniqueName: String? {
        guard let bus else { return nil }
        var name: UnsafePointer<CChar>?
        guard CSystemd_sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Calls a method asynchronously; `reply` runs on the loop thread with
    /// the reply (its body read by the caller, within limits), the peer's
    /// error, ``DBusError/timedOut(_:)`` or ``DBusError/disconnected``.
    /// A `destination` should be the daemon's unique name once known: a
    /// reply then comes from the connection that was asked, whoever owns
    /// the well-known name meanwhile.
    public func call(destination: String, path: String, interface: String, member: String,
                     arguments: [DBusArgument] = [], timeout: Duration = .seconds(25),
                     reply: @escaping (Result<DBusMessage, DBusError>) -> Void) {
        loop.preconditionInLoop()
        guard let bus else { return reply(.failure(.disconnected)) }
        guard DBusSyntax.isObjectPath(path) else { return reply(.failure(.malformed("'\(path)' is not an object path"))) }
        var message: OpaquePointer?
        var result = CSystemd_sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard result >= 0, let message else { return reply(.failure(.system(operation: "\(interface).\(member)", errno: -result))) }
        defer { CSystemd_sd_bus_message_unref(message) }
        for argument in arguments {
            result = argument.append(to: message)
            guard result >= 0 else { return reply(.failure(.system(operation: "\(interface).\(member) arguments", errno: -result))) }
        }
        let name = "\(interface).\(member)"
        let box = Unmanaged.passRetained(CallbackBox(reply: { result in
            // sd-bus answers a call that timed out with a NoReply error of its own.
            if case .failure(.remote("org.freedesktop.DBus.Error.NoReply", _)) = result { return reply(.failure(.timedOut(name))) }
            reply(result)
        })).toOpaque()
        var slot: OpaquePointer?
        let microseconds = UInt64(max(1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000))
        result = CSystemd_sd_bus_call_async(bus, &slot, message, replyTrampoline, box, microseconds)
        guard result >= 0, let slot else {
            Unmanaged<CallbackBox>.fromOpaque(box).release()
            return reply(.failure(.system(operation: name, errno: -result)))
        }
        // The bus owns the slot from here on; the box goes with it.
        CSystemd_sd_bus_slot_set_destroy_callback(slot, releaseBox)
        CSystemd_sd_bus_slot_set_floating(slot, 1)
        updateWatch()
    }

    /// Subscribes to the signals `rule` selects; `handler` gets each on the
    /// loop thread. Only signals that match the rule in every part are
    /// handed over, checked here: the bus delivers a signal addressed to
    /// this connection whatever the rules say, and does not check a
    /// well-known sender for sd-bus, so a rule's `sender` should be the
    /// unique name of the peer trusted (or `org.freedesktop.DBus`). Signals
    /// addressed to this connection alone are dropped unless
    /// `acceptingUnicast` (a daemon that sends its changes only to the
    /// clients that asked, as iio-sensor-proxy does).
    ///
    /// The bus may refuse the rule (a quota); `onRefused` then runs once
    /// and the connection stays open (sd-bus's default would close it).
    /// The subscription lasts as long as the returned object (or until the
    /// connection closes).
    public func subscribe(_ rule: DBusMatchRule, acceptingUnicast: Bool = false, onRefused: @escaping (DBusError) -> Void = { _ in },
                          handler: @escaping (DBusMessage) -> Void) throws(DBusError) -> DBusSubscription {
        loop.preconditionInLoop()
        guard let bus else { throw .disconnected }
        if let path = rule.path, !DBusSyntax.isObjectPath(path) { throw .malformed("'\(path)' is not an object path") }
        let box = Unmanaged.passRetained(CallbackBox(rule: rule, unicast: acceptingUnicast, signal: handler, refused: onRefused)).toOpaque()
        var slot: OpaquePointer?
        let result = CSystemd_sd_bus_add_match_async(bus, &slot, rule.text, signalTrampoline, installTrampoline, box)
        guard result >= 0, let slot else {
            Unmanaged<CallbackBox>.fromOpaque(box).release()
            throw .system(operation: "adding the match \(rule)", errno: -result)
        }
        CSystemd_sd_bus_slot_set_destroy_callback(slot, releaseBox)
        updateWatch()
        return DBusSubscription(slot: slot, loop: loop)
    }

    /// Closes the connection: pending calls get ``DBusError/disconnected``.
    public func close() {
        loop.preconditionInLoop()
        guard let closing = bus else { return }
        bus = nil
        source?.removeIfNeeded()
        timer?.cancel()
        // No flush: a slow or dead daemon must not block the loop.
        CSystemd_sd_bus_close_unref(closing)
    }

    /// Processes what the bus has (a bounded batch), then re-arms.
    private func process() {
        guard let bus else { return }
        for _ in 0..<Self.batch {
            let result = CSystemd_sd_bus_process(bus, nil)
            if result < 0 {
                let error = DBusError.system(operation: "the bus connection to \(address)", errno: -result)
                close()
                onDisconnect?(error)
                return
            }
            if result == 0 { return updateWatch() }
            guard self.bus != nil else { return }  // a callback closed it
        }
        // More is waiting: let the loop run other work first, then go on.
        updateWatch()
        timer?.schedule(after: .zero)
    }

    /// Sets the descriptor's interest and the timer from sd-bus's wishes.
    private func updateWatch() {
        guard let bus else { return }
        let events = CSystemd_sd_bus_get_events(bus)
        if events >= 0 {
            var wanted: Readiness = []
            if events & CSystemd_pollin() != 0 { wanted.insert(.read) }
            if events & CSystemd_pollout() != 0 { wanted.insert(.write) }
            if wanted != interest {
                do {
                    try source?.update(interest: wanted)
                    interest = wanted
                } catch {
                    // The source is gone (the loop shut down): nothing to watch.
                }
            }
        }
        var deadline: UInt64 = 0
        guard CSystemd_sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else {
            timer?.cancel()
            return
        }
        // 0 means "now"; otherwise an absolute CLOCK_MONOTONIC instant in µs,
        // the loop's own clock.
        let nanoseconds = deadline > UInt64(Int64.max / 1000) ? Int64.max : Int64(deadline) * 1000
        timer?.schedule(at: LoopInstant(nanoseconds: nanoseconds))
    }
}

/// A match subscription; it ends when released (on the loop thread) or
/// when ``cancel()`` is called.
public final class DBusSubscription {
    private var slot: OpaquePointer?
    private let loop: MainRunLoop

    init(slot: OpaquePointer, loop: MainRunLoop) {
        self.slot = slot
        self.loop = loop
    }

    deinit {
        guard let slot else { return }
        let bound = LoopBound(handingOver: slot, to: loop)
        if loop.inLoop {
            CSystemd_sd_bus_slot_unref(slot)
        } else {
            // A loop that is shut down (execute throws) runs nothing; the
            // connection's close freed the slot with everything else.
            try? loop.execute { CSystemd_sd_bus_slot_unref(bound.value) }
        }
    }

    /// Ends the subscription.
    public func cancel() {
        guard let slot else { return }
        self.slot = nil
        CSystemd_sd_bus_slot_unref(slot)
    }
}

/// An argument of a method call.
public enum DBusArgument: Sendable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case uint32(UInt32)
    case int32(Int32)

    fileprivate func append(to message: OpaquePointer) -> Int32 {
        switch self {
        case .string(let text):
            return text.withCString { CSystemd_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        case .objectPath(let text):
            return text.withCString { CSystemd_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), $0) }
        case .bool(let value):
            var flag: Int32 = value ? 1 : 0
            return CSystemd_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &flag)
        case .uint32(var value):
            return CSystemd_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &value)
        case .int32(var value):
            return CSystemd_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "i")), &value)
        }
    }
}

/// What a C callback reaches: a reply handler (called once) or a signal
/// handler with its rule. Retained while its sd-bus slot lives; released
/// by the slot's destroy callback.
private final class CallbackBox {
    var reply: ((Result<DBusMessage, DBusError>) -> Void)?
    let rule: DBusMatchRule?
    let acceptsUnicast: Bool
    let signal: ((DBusMessage) -> Void)?
    var refused: ((DBusError) -> Void)?

    init(reply: @escaping (Result<DBusMessage, DBusError>) -> Void) {
        self.reply = reply
        rule = nil
        acceptsUnicast = false
        signal = nil
        refused = nil
    }

    init(rule: DBusMatchRule, unicast: Bool, signal: @escaping (DBusMessage) -> Void, refused: @escaping (DBusError) -> Void) {
        reply = nil
        self.rule = rule
        acceptsUnicast = unicast
        self.signal = signal
        self.refused = refused
    }

    /// Delivers the reply once; later calls do nothing.
    func deliver(_ result: Result<DBusMessage, DBusError>) {
        guard let reply else { return }
        self.reply = nil
        reply(result)
    }

    deinit {
        // A call whose slot went without a reply (the connection closed).
        deliver(.failure(.disconnected))
    }
}

private let releaseBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
    guard let context else { return }
    Unmanaged<CallbackBox>.fromOpaque(context).release()
}

/// The peer's error in a method-error message.
private func remoteError(_ message: OpaquePointer) -> DBusError {
    let name = CSystemd_error_name(message).map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
    let text = CSystemd_error_message(message).map { String(cString: $0) } ?? ""
    return .remote(name: name, message: text)
}

private let replyTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32 = {
    message, context, _ in
    guard let message, let context else { return 0 }
    let box = Unmanaged<CallbackBox>.fromOpaque(context).takeUnretainedValue()
    if CSystemd_sd_bus_message_is_method_error(message, nil) > 0 {
        box.deliver(.failure(remoteError(message)))
    } else {
        box.deliver(.success(DBusMessage(message)))
    }
    return 0
}

private let signalTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32 = {
    message, context, _ in
    guard let message, let context else { return 0 }
    let box = Unmanaged<CallbackBox>.fromOpaque(context).takeUnretainedValue()
    guard let rule = box.rule, let signal = box.signal else { return 0 }
    // Header fields only: a signal someone else sent, or addressed to this
    // connection alone when only broadcasts were asked for, is dropped
    // before anything of its body is read.
    guard box.acceptsUnicast || CSystemd_sd_bus_message_get_destination(message) == nil,
          CSystemd_sd_bus_message_is_signal(message, nil, nil) > 0 else { return 0 }
    let received = DBusMessage(message)
    guard rule.selects(sender: received.sender, path: received.path, interface: received.interface, member: received.member) else {
        return 0
    }
    signal(received)
    return 0
}

/// The bus's answer to AddMatch: a refusal is reported, and the
/// connection stays (sd-bus closes it when no such callback is given).
private let installTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32 = {
    message, context, _ in
    guard let message, let context else { return 0 }
    let box = Unmanaged<CallbackBox>.fromOpaque(context).takeUnretainedValue()
    if CSystemd_sd_bus_message_is_method_error(message, nil) > 0, let refused = box.refused {
        box.refused = nil
        refused(remoteError(message))
    }
    return 0
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension SystemBusConnection: Sendable {}

/// Bound to its loop's thread.
@available(*, unavailable)
extension DBusSubscription: Sendable {}
