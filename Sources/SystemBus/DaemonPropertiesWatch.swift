import MainLoop

/// One object's properties on a system daemon, followed for a source, and
/// believed only from the daemon: the connection that owns its well-known
/// name now.
///
/// - The owner is asked of the bus (`GetNameOwner`) and followed through
///   `NameOwnerChanged` signals that the bus itself sent (any peer can send
///   a signal of that name; only the bus's carry its name as sender).
/// - Each owner's object is found, prepared and read whole (`GetAll`),
///   every call addressed to the owner's unique name, then followed
///   through `PropertiesChanged` from that unique name alone. Signals of
///   anyone else, and signals addressed to this connection rather than
///   broadcast, are dropped unread (``SystemBusConnection/subscribe(_:acceptingUnicast:onRefused:handler:)``).
/// - Bodies are read within ``DBusReadLimits`` after their signature is
///   checked; properties are checked against the source's schema.
/// - A call of the start that fails (a daemon that does not answer in
///   time, an error, a reply of the wrong shape) is tried again after 1 s,
///   then 2, 4, … up to 30 s, until the daemon answers or leaves.
///
/// A daemon that is not running, or goes away, is reported through
/// `onProblem` and `onAbsent`, and the watch waits for it to come back;
/// nothing is thrown at the service. Loop thread only.
final class DaemonPropertiesWatch {
    /// How a source finds and prepares its object.
    struct Spec {
        /// The daemon's well-known bus name, e.g. `org.freedesktop.UPower`.
        let service: String
        /// The interface whose properties are read.
        let interface: String
        /// The properties read, with their kinds.
        let schema: DBusPropertySchema
        /// Finds the object (some are fixed, some are asked for), given the
        /// owner's unique name to call.
        let resolvePath: (_ bus: SystemBusConnection, _ owner: String, _ timeout: Duration,
                          _ done: @escaping (Result<String, DBusError>) -> Void) -> Void
        /// Runs before the properties are read (e.g. claiming a sensor).
        let prepare: (_ bus: SystemBusConnection, _ owner: String, _ path: String, _ timeout: Duration,
                      _ done: @escaping (Result<Void, DBusError>) -> Void) -> Void
        /// Other signals followed from the owner alone (e.g. logind's `PrepareForSleep`).
        var signals: [OwnerSignal] = []
        /// The daemon sends its changes to the clients that asked for them
        /// (addressed to this connection), not as broadcasts.
        var unicastChanges = false

        /// A daemon whose object is at a fixed path and needs no preparing;
        /// its interface is named like the service unless given.
        static func fixedObject(service: String, path: String, interface: String? = nil, schema: DBusPropertySchema) -> Spec {
            Spec(service: service, interface: interface ?? service, schema: schema,
                 resolvePath: { _, _, _, done in done(.success(path)) },
                 prepare: { _, _, _, _, done in done(.success(())) })
        }
    }

    /// A signal followed from the daemon's current owner only.
    struct OwnerSignal {
        let path: String
        let interface: String
        let member: String
        let handler: (DBusMessage) -> Void
    }

    /// The first wait before a failed start is tried again; it doubles
    /// up to ``longestRetry``.
    static let firstRetry = Duration.seconds(1)
    static let longestRetry = Duration.seconds(30)

    private let bus: SystemBusConnection
    private let spec: Spec
    private let timeout: Duration
    private let onProperties: ([String: DBusValue], _ initial: Bool) -> Void
    private let onProblem: (String) -> Void
    private let onAbsent: (_ left: Bool) -> Void
    private var ownerWatch: DBusSubscription?
    /// The subscriptions to the current owner's signals (``Spec/signals``).
    private var ownerSubscriptions: [DBusSubscription] = []
    /// The subscription to the current owner's `PropertiesChanged`: one,
    /// replaced by each start (a start tried again after a failure must not
    /// add a second).
    private var changes: DBusSubscription?
    /// The unique name that owns the service now, once known.
    private(set) var owner: String?
    /// Bumped whenever the owner changes: replies and retries of an
    /// earlier owner are ignored.
    private var generation = 0
    private var retryTimer: LoopTimer?
    private var retryDelay = firstRetry

    /// Starts following. Each callback runs on the loop thread.
    /// - Parameters:
    ///   - onProperties: accepted properties, `initial` for a whole read.
    ///   - onProblem: a reason the source has nothing (or less) to say.
    ///   - onAbsent: the daemon is not on the bus; `left` when it was and
    ///     went away, false when it was not there at start.
    init(bus: SystemBusConnection, spec: Spec, timeout: Duration,
         onProperties: @escaping ([String: DBusValue], Bool) -> Void,
         onProblem: @escaping (String) -> Void, onAbsent: @escaping (_ left: Bool) -> Void = { _ in }) throws(DBusError) {
        self.bus = bus
        self.spec = spec
        self.timeout = timeout
        self.onProperties = onProperties
        self.onProblem = onProblem
        self.onAbsent = onAbsent
        // Weak, and not cancelled at deinit (which may run on any thread): a
        // retry still scheduled then fires once, for no one.
        retryTimer = bus.loop.makeTimer { [weak self] in self?.retry() }
        // Subscribed before the owner is asked for: a change after the
        // answer is never missed.
        let rule = DBusMatchRule(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                 member: "NameOwnerChanged", arguments: [0: spec.service])
        ownerWatch = try bus.subscribe(rule, onRefused: refusedMatch) { [weak self] message in self?.ownerChanged(message) }
        lookUpOwner()
    }

    /// Reports the bus's refusal of one of the watch's match rules.
    private var refusedMatch: (DBusError) -> Void {
        { [weak self] error in self?.onProblem("the bus refused a match: \(error)") }
    }

    /// `NameOwnerChanged(name, old, new)` from the bus.
    private func ownerChanged(_ message: DBusMessage) {
        guard let values = read(message, expecting: "sss"), values.count == 3, values[0].stringValue == spec.service, let newOwner = values[2].stringValue else { return }
        if newOwner.isEmpty {
            guard owner != nil else { return }
            forgetOwner()
            onProblem("\(spec.service) left the bus; waiting for it to come back")
            onAbsent(true)
        } else if DBusSyntax.isUniqueName(newOwner), newOwner != owner {
            follow(newOwner)
        }
    }

    /// Asks the bus who owns the service now.
    private func lookUpOwner() {
        let current = generation
        bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                 member: "GetNameOwner", arguments: [.string(spec.service)], timeout: timeout) { [weak self] reply in
            guard let self, current == self.generation else { return }
            let owner = reply.flatMap { message in
                Result { () throws(DBusError) in try message.values(expecting: "s").first?.stringValue ?? "" }
            }
            switch owner {
            case .success(let name) where DBusSyntax.isUniqueName(name):
                self.follow(name)
            case .success(let name):
                self.failed(.malformed("GetNameOwner returned '\(name)', not a unique name"))
            case .failure(.remote("org.freedesktop.DBus.Error.NameHasNoOwner", _)):
                self.onProblem("\(self.spec.service) is not running; waiting for it to appear")
                self.onAbsent(false)
            case .failure(let error):
                self.failed(error)
            }
        }
    }

    private func forgetOwner() {
        generation += 1
        owner = nil
        ownerSubscriptions = []
        changes = nil
        retryTimer?.cancel()
        retryDelay = Self.firstRetry
    }

    /// Follows a new owner: its signals, then its object.
    private func follow(_ newOwner: String) {
        forgetOwner()
        owner = newOwner
        do throws(DBusError) {
            for signal in spec.signals {
                let rule = DBusMatchRule(sender: newOwner, path: signal.path, interface: signal.interface, member: signal.member)
                ownerSubscriptions.append(try bus.subscribe(rule, onRefused: refusedMatch, handler: signal.handler))
            }
        } catch {
            return failed(error)
        }
        start()
    }

    /// Finds the current owner's object, prepares it, subscribes to its
    /// changes and reads every property (delivered as the initial values).
    private func start() {
        guard let owner else { return lookUpOwner() }
        let current = generation
        spec.resolvePath(bus, owner, timeout) { [weak self] resolved in
            guard let self, current == self.generation else { return }
            switch resolved {
            case .failure(let error): self.failed(error)
            case .success(let path) where !DBusSyntax.isObjectPath(path):
                self.failed(.malformed("'\(path)' is not an object path"))
            case .success(let path): self.prepare(path, owner: owner, generation: current)
            }
        }
    }

    private func prepare(_ path: String, owner: String, generation current: Int) {
        spec.prepare(bus, owner, path, timeout) { [weak self] prepared in
            guard let self, current == self.generation else { return }
            if case .failure(let error) = prepared { return self.failed(error) }
            let rule = DBusMatchRule(sender: owner, path: path, interface: "org.freedesktop.DBus.Properties",
                                     member: "PropertiesChanged", arguments: [0: self.spec.interface])
            do throws(DBusError) {
                self.changes = try self.bus.subscribe(rule, acceptingUnicast: self.spec.unicastChanges,
                                                      onRefused: self.refusedMatch) { [weak self] message in
                    guard let self, current == self.generation else { return }
                    self.changed(message)
                }
            } catch {
                return self.failed(error)
            }
            self.bus.call(destination: owner, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                          arguments: [.string(self.spec.interface)], timeout: self.timeout) { [weak self] reply in
                guard let self, current == self.generation else { return }
                let properties = reply.flatMap { message in
                    Result { () throws(DBusError) in try message.values(expecting: "a{sv}").first?.properties ?? [:] }
                }
                switch properties {
                case .failure(let error): self.failed(error)
                case .success(let properties):
                    self.retryDelay = Self.firstRetry
                    self.deliver(properties, initial: true)
                }
            }
        }
    }

    /// `PropertiesChanged(interface, changed, invalidated)` from the owner.
    private func changed(_ message: DBusMessage) {
        guard let values = read(message, expecting: "sa{sv}as"), values.count == 3, values[0].stringValue == spec.interface, let changed = values[1].properties else { return }
        deliver(changed, initial: false)
    }

    /// A signal's values, or nil (and the reason reported) when it is not
    /// of `signature` or over the read limits.
    private func read(_ message: DBusMessage, expecting signature: String) -> [DBusValue]? {
        do {
            return try message.values(expecting: signature)
        } catch {
            onProblem("\(spec.service): a \(message.member ?? "signal") was not read: \(error)")
            return nil
        }
    }

    private func deliver(_ properties: [String: DBusValue], initial: Bool) {
        let (accepted, problems) = spec.schema.accept(properties)
        for problem in problems { onProblem("\(spec.service): \(problem)") }
        onProperties(accepted, initial)
    }

    /// A call of the start failed: said, and tried again later.
    private func failed(_ error: DBusError) {
        if error == .disconnected { return }  // the connection's owner reconnects
        onProblem("\(spec.service): \(error); trying again in \(retryDelay)")
        retryTimer?.schedule(after: retryDelay)
        retryDelay = min(retryDelay * 2, Self.longestRetry)
    }

    private func retry() {
        if owner == nil { lookUpOwner() } else { start() }
    }

    /// The object path a method such as `GetDisplayDevice` or `GetSession`
    /// returned: its reply must be one object path (`o`).
    static func objectPath(of reply: Result<DBusMessage, DBusError>) -> Result<String, DBusError> {
        reply.flatMap { message in
            Result { () throws(DBusError) in
                guard let path = try message.values(expecting: "o").first?.stringValue else {
                    throw .malformed("\(message.member ?? "the reply") returned no path")
                }
                return path
            }
        }
    }
}
