import ControlSocket
import LinuxSystemEvents
import Glibc
import ServiceKit
import SystemNotifications

/// How a ``ServiceHost`` is set up (the `mainloop run` flags).
struct ServiceOptions: Sendable {
    /// The control socket path.
    var socketPath: String
    /// The user-defaults file (default: the domain's file).
    var defaultsFile: String?
    /// The defaults domain, used when `defaultsFile` is nil.
    var domain = "mainloop"
    /// The locale file watched.
    var localeFile = "/etc/default/locale"
    /// Zone files watched for `timeZone`.
    var zoneFiles = ["/etc/localtime", "/etc/timezone"]
    /// Launch in the background (`launchInBackground`) instead of `launch`.
    var background = false
    /// Watch for CLOCK_REALTIME being set.
    var detectClockSet = true
    /// Follow UPower, iio-sensor-proxy and logind on the system bus
    /// (``SystemBusSources``); no bus turns them off with one logged reason.
    var systemBus = true
    /// Follow the kernel's device events (accessories, screens).
    var devices = true
    /// The socket file's mode.
    var socketMode: mode_t = 0o600
    /// What the notification engine stores at most (subjects per keyed
    /// kind, subject id length, value size); events over them are refused.
    var limits = CoalescingLimits()
    /// The largest user-defaults file read (``/LinuxSystemEvents/UserDefaultsStore/maxFileBytes``).
    var maxDefaultsFileBytes = 8 << 20
    /// The largest query reply, in bytes of JSON; a bigger one is refused
    /// with an error that says so.
    var maxReplyBytes = 1 << 20
    /// A listening control socket passed by the service manager (socket
    /// activation, ``/ControlSocket/SocketActivation``): served instead of binding
    /// ``socketPath``, and its file is never removed.
    var inheritedSocket: Int32?

    init(socketPath: String) { self.socketPath = socketPath }

    /// The sources' part of these options.
    var sourceSettings: LinuxSources.Settings {
        LinuxSources.Settings(defaultsFile: defaultsFile, domain: domain, localeFile: localeFile, zoneFiles: zoneFiles,
                              detectClockSet: detectClockSet, maxDefaultsFileBytes: maxDefaultsFileBytes, devices: devices)
    }
}
