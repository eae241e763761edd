import Glibc

/// How a ``ServiceHost`` is set up (the `mainloop run` flags).
public struct ServiceOptions: Sendable {
    /// The control socket path.
    public var socketPath: String
    /// The user-defaults file (default: the domain's file).
    public var defaultsFile: String?
    /// The defaults domain, used when `defaultsFile` is nil.
    public var domain = "mainloop"
    /// The locale file watched.
    public var localeFile = "/etc/default/locale"
    /// Zone files watched for `timeZone`.
    public var zoneFiles = ["/etc/localtime", "/etc/timezone"]
    /// Launch in the background (`launchInBackground`) instead of `launch`.
    public var background = false
    /// Watch for CLOCK_REALTIME being set.
    public var detectClockSet = true
    /// The socket file's mode.
    public var socketMode: mode_t = 0o600

    public init(socketPath: String) { self.socketPath = socketPath }
}
