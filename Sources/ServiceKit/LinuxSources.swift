import AppLifecycle
import FileSupport
import LinuxSystemEvents
import Logging
import MainLoop
import ServiceLogging
import SystemNotifications

/// The Linux sources as one part for any application's notification
/// center: significant time change (clock set, midnight, zone and DST),
/// the locale file, a user-defaults file, the thermal zones and the
/// kernel's device events, each posting into `center`
/// so holding, merging and accounting work as for any other event.
///
/// ```swift
/// let sources = try LinuxSources(center: application.notifications, logger: logger,
///                                settings: LinuxSources.Settings(defaultsFile: "/var/lib/my/defaults.json"))
/// sources.setInitialValues()        // before launch: the baseline, not changes
/// ```
///
/// A file that cannot be read (absent, a FIFO, a device, over its size
/// limit) is logged, rate-limited, and the last good value stays; an event
/// the center refuses (over its limits) is logged and counted. Keep the
/// part as long as the sources should run; releasing it on the loop thread
/// stops them. Loop thread only.
public final class LinuxSources {
    /// Where the sources read from.
    public struct Settings: Sendable {
        /// The user-defaults file; nil: the domain's file under
        /// `$XDG_CONFIG_HOME/mainloop/` (``/LinuxSystemEvents/UserDefaultsStore/init(domain:)``).
        public var defaultsFile: String?
        /// The defaults domain, used when ``defaultsFile`` is nil.
        public var domain: String
        /// The locale file watched.
        public var localeFile: String
        /// Zone files watched for `timeZone`; the first is the one the C
        /// library reads for local time.
        public var zoneFiles: [String]
        /// Watch for CLOCK_REALTIME being set (a timerfd that the kernel
        /// cancels on a clock set).
        public var detectClockSet: Bool
        /// The largest user-defaults file read (``/LinuxSystemEvents/UserDefaultsStore/maxFileBytes``).
        public var maxDefaultsFileBytes: Int
        /// Follow the kernel's device events for accessories (USB devices)
        /// and screens (DRM connectors): ``/LinuxSystemEvents/DeviceEventSource``.
        public var devices: Bool
        /// Where the kernel's thermal zones are read for `thermalState`
        /// (``/LinuxSystemEvents/ThermalZoneSource``); nil turns it off.
        public var thermalDirectory: String?
        /// How often the thermal zones are read.
        public var thermalInterval: Duration

        /// The system's files: `/etc/default/locale`, `/etc/localtime`
        /// and `/etc/timezone`, the `mainloop` defaults domain.
        public init(defaultsFile: String? = nil, domain: String = "mainloop",
                    localeFile: String = "/etc/default/locale",
                    zoneFiles: [String] = ["/etc/localtime", "/etc/timezone"],
                    detectClockSet: Bool = true, maxDefaultsFileBytes: Int = 8 << 20, devices: Bool = true,
                    thermalDirectory: String? = "/sys/class/thermal", thermalInterval: Duration = .seconds(5)) {
            self.defaultsFile = defaultsFile
            self.domain = domain
            self.localeFile = localeFile
            self.zoneFiles = zoneFiles
            self.detectClockSet = detectClockSet
            self.maxDefaultsFileBytes = maxDefaultsFileBytes
            self.devices = devices
            self.thermalDirectory = thermalDirectory
            self.thermalInterval = thermalInterval
        }
    }

    /// The center the sources post into.
    public let center: SystemNotificationCenter
    /// The user-defaults store the defaults source watches.
    public let defaults: UserDefaultsStore
    /// The wall clock the time source reads (its zone follows the first zone file).
    public let wallClock: SystemWallClock
    private let watcher: FileWatcher
    private let timeSource: SignificantTimeChangeSource
    private let localeSource: LocaleSource
    private let defaultsMonitor: UserDefaultsMonitor
    /// Accessories and screens, when ``Settings/devices`` is on and the
    /// kernel's event socket could be opened.
    public private(set) var devices: DeviceEventSource?
    /// The thermal state, when ``Settings/thermalDirectory`` is set.
    public private(set) var thermal: ThermalZoneSource?
    /// Events the center refused (over a limit, malformed): a file can
    /// produce them at any rate, so the log is rate-limited.
    private let refusedEventLog: RateLimitedLog

    /// Starts watching; nothing is posted until a file or the clock changes.
    /// - Throws: when a watch cannot be set up (inotify, timerfd) or the
    ///   defaults domain's directory cannot be made.
    public init(center: SystemNotificationCenter, logger: Logger, settings: Settings = Settings()) throws {
        let loop = center.application.loop
        self.center = center
        wallClock = SystemWallClock(localtimePath: settings.zoneFiles.first ?? "/etc/localtime")
        watcher = try FileWatcher(loop: loop)
        if let file = settings.defaultsFile {
            defaults = UserDefaultsStore(path: file)
        } else {
            defaults = try UserDefaultsStore(domain: settings.domain)
        }
        defaults.maxFileBytes = settings.maxDefaultsFileBytes
        let refusedEventLog = RateLimitedLog(logger: logger, loop: loop)
        let sourceProblemLog = RateLimitedLog(logger: logger, loop: loop)
        self.refusedEventLog = refusedEventLog
        let post: (SystemEvent) -> Void = { event in
            do { try center.post(event) } catch { refusedEventLog.log(.error, "cannot post \(event.kind): \(error)") }
        }
        timeSource = try SignificantTimeChangeSource(loop: loop, clock: wallClock, watcher: watcher,
                                                     zoneFiles: settings.zoneFiles, detectClockSet: settings.detectClockSet,
                                                     onProblem: { sourceProblemLog.log(.warning, $0) }, post: post)
        localeSource = try LocaleSource(path: settings.localeFile, watcher: watcher,
                                        onProblem: { sourceProblemLog.log(.warning, "locale: \($0); keeping the last locale read") },
                                        post: post)
        defaultsMonitor = try UserDefaultsMonitor(store: defaults, watcher: watcher, post: post) { error in
            sourceProblemLog.log(.error, "\(error)")
        }
        if let directory = settings.thermalDirectory {
            thermal = ThermalZoneSource(loop: loop, directory: directory, interval: settings.thermalInterval, post: post) {
                sourceProblemLog.log(.warning, $0)
            }
        }
        if settings.devices {
            // Read before launch, the connectors are the baseline; after it,
            // changes.
            let devicePost: (SystemEvent) throws -> Void = { event in try center.postOrSetBaseline(event) }
            do {
                devices = try DeviceEventSource(loop: loop, post: devicePost) { sourceProblemLog.log(.warning, "devices: \($0)") }
            } catch {
                logger.info("accessories and screens: not followed (\(error))")
            }
        }
    }

    /// The locale identifier last read.
    public var localeIdentifier: String { localeSource.identifier }

    /// Gives the center the system's current values (the locale, every
    /// defaults key) as its baseline, before the app launches: they are
    /// where the app starts, not changes. What other processes left in the
    /// files may be over the center's limits: such a value is refused and
    /// counted exactly as at run time, and the rest is set.
    public func setInitialValues() {
        devices?.rescanScreens()
        for event in [.locale(localeSource.identifier)] + (thermal.map { [$0.currentEvent] } ?? []) + defaultsMonitor.initialEvents {
            do {
                try center.setInitialValue(event)
            } catch {
                refusedEventLog.log(.error, "initial \(event.kind) value refused: \(error)")
            }
        }
    }

    /// Re-reads every source (the locale and zone files, a clock set, the
    /// defaults file) and posts what changed: for a reload (SIGHUP) and
    /// after the process was stopped and continued, when the watchers'
    /// events may not have been seen yet. Sources compare with what they
    /// last posted, so a change is posted once.
    public func reload() {
        localeSource.reload()
        timeSource.recheck()
        defaultsMonitor.reload()
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension LinuxSources: Sendable {}
