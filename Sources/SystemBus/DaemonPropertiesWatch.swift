import MainLoop

/// One object's properties on a system daemon, followed for a source: read
/// whole at start and whenever the daemon (re)appears on the bus
/// (`NameOwnerChanged`), then followed through `PropertiesChanged`.
///
/// A daemon that is not running, or goes away, is reported once through
/// `onProblem` and the watch waits for it to come back; nothing is thrown
/// at the service. Loop thread only.
final class DaemonPropertiesWatch {
    /// How a source finds and prepares its object.
    struct Spec {
        /// The daemon's well-known bus name, e.g. `org.freedesktop.UPower`.
        let service: String
        /// The interface whose properties are read.
        let interface: String
        /// Finds the object (some are fixed, some are asked for).
        let resolvePath: (SystemBusConnection, @escaping (Result<String, DBusError>) -> Void) -> Void
        /// Runs before the properties are read (e.g. claiming a sensor).
        let prepare: (SystemBusConnection, String, @escaping (Result<Void, DBusError>) -> Void) -> Void
    }

    private let bus: SystemBusConnection
    private let spec: Spec
    private let onProperties: ([String: DBusValue], _ initial: Bool) -> Void
    private let onProblem: (String) -> Void
    private var ownerWatch: DBusSubscription?
    private var changes: DBusSubscription?
    private var watchedPath: String?
    /// Bumped at every (re)start: replies of an earlier start are ignored.
    private var generation = 0

    init(bus: SystemBusConnection, spec: Spec, onProperties: @escaping ([String: DBusValue], Bool) -> Void,
         onProblem: @escaping (String) -> Void) throws(DBusError) {
        self.bus = bus
        self.spec = spec
        self.onProperties = onProperties
        self.onProblem = onProblem
        let rule = "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
            + "member='NameOwnerChanged',arg0='\(spec.service)'"
        ownerWatch = try bus.subscribe(match: rule) { [weak self] _, _, values in
            guard let self, values.count == 3, let newOwner = values[2].stringValue else { return }
            if newOwner.isEmpty {
                self.generation += 1
                self.onProblem("\(self.spec.service) left the bus; waiting for it to come back")
            } else {
                self.start()
            }
        }
        start()
    }

    /// Finds the object, prepares it, subscribes to its changes and reads
    /// every property (delivered as the initial values).
    func start() {
        generation += 1
        let current = generation
        spec.resolvePath(bus) { [weak self] resolved in
            guard let self, current == self.generation else { return }
            switch resolved {
            case .failure(let error): self.report(error)
            case .success(let path): self.prepare(path, generation: current)
            }
        }
    }

    private func prepare(_ path: String, generation current: Int) {
        if watchedPath != path {
            watchedPath = path
            let rule = "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                + "path='\(path)',arg0='\(spec.interface)'"
            do {
                changes = try bus.subscribe(match: rule) { [weak self] _, _, values in
                    guard let self, values.count >= 2, let changed = values[1].properties else { return }
                    self.onProperties(changed, false)
                }
            } catch {
                report(error)
                return
            }
        }
        spec.prepare(bus, path) { [weak self] prepared in
            guard let self, current == self.generation else { return }
            if case .failure(let error) = prepared { return self.report(error) }
            self.bus.call(destination: self.spec.service, path: path, interface: "org.freedesktop.DBus.Properties",
                          member: "GetAll", arguments: [.string(self.spec.interface)], timeout: .seconds(5)) { [weak self] reply in
                guard let self, current == self.generation else { return }
                switch reply {
                case .failure(let error): self.report(error)
                case .success(let values):
                    guard let properties = values.first?.properties else {
                        return self.report(.malformed("GetAll(\(self.spec.interface)) did not return a{sv}"))
                    }
                    self.onProperties(properties, true)
                }
            }
        }
    }

    /// The object path a method such as `GetDisplayDevice` or `GetSession` returned.
    static func objectPath(of reply: Result<[DBusValue], DBusError>, member: String) -> Result<String, DBusError> {
        reply.flatMap { values in
            guard let path = values.first?.stringValue else { return .failure(.malformed("\(member) returned no path")) }
            return .success(path)
        }
    }

    private func report(_ error: DBusError) {
        if case .remote(let name, _) = error, name == "org.freedesktop.DBus.Error.ServiceUnknown"
            || name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            onProblem("\(spec.service) is not running; waiting for it to appear")
        } else {
            onProblem("\(spec.service): \(error)")
        }
    }
}
