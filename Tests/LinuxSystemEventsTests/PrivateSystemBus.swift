import Foundation
import Glibc
import TestSupport

/// A private system bus for tests: a real `dbus-daemon` with a config of
/// the test's own, and python-dbusmock's templates (Debian's
/// python3-dbusmock, with the system Python) as the daemons. Everything it
/// starts is stopped by PID when it is released.
final class PrivateSystemBus {
    /// Who may do what on the bus.
    enum Policy {
        /// Anyone may own any name and call anything.
        case permissive
        /// A system bus's default policy (Debian's /usr/share/dbus-1/system.conf):
        /// only root owns names or calls methods; anyone may connect, send
        /// signals, and call the bus driver.
        case system
    }

    let directory = TemporaryDirectory()
    let address: String
    private let socket: String
    private var daemon: TestProcess?
    private var mocks: [String: TestProcess] = [:]

    init(policy: Policy = .permissive) throws {
        socket = directory.file("bus")
        address = "unix:path=\(socket)"
        // An unprivileged peer reaches the socket through the directory.
        chmod(directory.path, 0o755)
        let config = Self.config(socket: socket, policy: policy == .system ? Self.systemPolicy : Self.permissivePolicy)
        try config.write(toFile: directory.file("bus.conf"), atomically: true, encoding: .utf8)
        try startDaemon()
    }

    /// A bus configuration listening on `socket` with `policy`'s rules.
    private static func config(socket: String, policy: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
        \(policy)
        </busconfig>
        """
    }

    private static let permissivePolicy = """
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_type="method_return"/>
            <allow send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="signal"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
          </policy>
        """

    /// Debian's default system-bus policy (/usr/share/dbus-1/system.conf).
    private static let systemPolicy = """
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
          </policy>
          <policy user="root">
            <allow own="*"/>
            <allow send_type="method_call"/>
          </policy>
        """

    /// Starts dbus-daemon on the bus's socket and waits until it listens.
    private func startDaemon() throws {
        unlink(socket)
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(directory.file("bus.conf"))", "--nofork"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        daemon = process
        guard eventually(timeout: 10, { (try? self.busctl(["status"])) != nil }) else { throw TestFailure("dbus-daemon did not listen") }
    }

    /// Stops dbus-daemon and its mocks (by PID) and starts it again at the
    /// same address: what a client sees when the system bus restarts.
    func restartDaemon() throws {
        for mock in mocks.values { Self.stop(mock) }
        mocks = [:]
        if let daemon { Self.stop(daemon) }
        daemon = nil
        try startDaemon()
    }

    /// Sends `signal` to a template's daemon (SIGSTOP stalls it, SIGCONT resumes it).
    func signalMock(_ template: String, _ signal: Int32) {
        guard let mock = mocks[template] else { return }
        kill(mock.processIdentifier, signal)
    }

    deinit {
        for mock in mocks.values { Self.stop(mock) }
        if let daemon { Self.stop(daemon) }
    }

    /// Starts a python-dbusmock template as the daemon owning `name`.
    func startMock(_ template: String, name: String, parameters: String? = nil) throws {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-m", "dbusmock", "--system", "-t", template] + (parameters.map { ["-p", $0] } ?? [])
        process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        mocks[template] = process
        guard eventually(timeout: 20, { (try? self.busctl(["status", name])) != nil }) else {
            throw TestFailure("\(template) did not take \(name)")
        }
    }

    /// Stops a template's daemon (by its PID) and waits until its name is gone.
    func stopMock(_ template: String, name: String) {
        guard let mock = mocks.removeValue(forKey: template) else { return }
        Self.stop(mock)
        _ = eventually(timeout: 10) { (try? self.busctl(["status", name])) == nil }
    }

    /// Runs `busctl --address=… ARGS` and returns its output; throws on failure.
    @discardableResult
    func busctl(_ arguments: [String]) throws -> String {
        let result = try runToCompletion("/usr/bin/busctl", ["--address=\(address)"] + arguments)
        guard result.status == 0 else { throw TestFailure("busctl \(arguments) failed: \(result.error)") }
        return result.output
    }

    /// `org.freedesktop.DBus.Mock` method calls on a mocked object.
    func mock(_ service: String, _ path: String, _ method: String, _ signature: String, _ arguments: [String]) throws {
        try busctl(["call", service, path, "org.freedesktop.DBus.Mock", method, signature] + arguments)
    }

    /// SIGKILL: no test reads anything the bus or a mock would do on a
    /// clean exit, and a stop then never waits.
    private static func stop(_ process: TestProcess) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitForExit(within: 10)
    }
}
