import AppLifecycle
import CLinux
import Glibc
import Logging
import MainLoop
import ServiceLogging

/// Memory pressure as the iOS memory warning.
///
/// Watches a PSI trigger (or a FIFO a supervisor writes to, as systemd
/// allows) and, each time it fires, gives the application a memory warning
/// (``/AppLifecycle/Application/receiveMemoryWarning()``). Sustained pressure while the
/// app is suspended purges it (BEHAVIOUR.md §1 `purge`), as iOS reclaims suspended
/// apps: pressure reported again at least ``purgeAfter`` after the first
/// report of this suspension, with no quiet gap longer than ``purgeAfter``
/// in between. A PSI trigger fires at most once per window (2 s by default)
/// while the stall lasts, so 10 s of pressure is about five reports.
///
/// Loop thread only; stop it with ``stop()`` or by releasing it on the loop.
public final class MemoryPressureMonitor {
    /// The file watched.
    public let path: String
    /// How long pressure must last while suspended before the app is purged.
    public let purgeAfter: Duration
    /// Pressure reports so far.
    public private(set) var reports = 0
    /// Suspended apps purged so far.
    public private(set) var purges = 0

    private let application: Application
    private let logger: Logger
    /// The kernel (or a writer of the FIFO) reports at its own rate.
    private let warningLog: RateLimitedLog
    /// The PSI file or the FIFO.
    private var fileFD: Int32 = -1
    /// For a PSI file: the epoll set that turns EPOLLPRI into readability.
    private var epollFD: Int32 = -1
    private var source: FileDescriptorSource?
    /// The first report of the current suspension and the latest one.
    private var sustained: (first: LoopInstant, last: LoopInstant)?

    /// Opens `settings.watchPath` and starts watching.
    /// - Throws: ``MemoryPressureError`` when the file cannot be watched
    ///   (nothing is left open then); the settings must name a file.
    public init(application: Application, settings: MemoryPressureSettings, purgeAfter: Duration = .seconds(10),
                logger: Logger) throws(MemoryPressureError) {
        guard let path = settings.watchPath else { throw .unsupportedFile(path: "(none)") }
        self.path = path
        self.application = application
        self.purgeAfter = purgeAfter
        self.logger = logger
        warningLog = RateLimitedLog(logger: logger, loop: application.loop)
        var status = stat()
        guard stat(path, &status) == 0 else { throw .cannotWatch(path: path, operation: "stat", errno: errno) }
        let watched: Int32
        if status.st_mode & S_IFMT == S_IFIFO {
            // Read-write: the monitor is a writer too, so the FIFO never
            // reports end-of-file (which would be ready forever) when the
            // supervisor's writer closes.
            fileFD = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard fileFD >= 0 else { throw .cannotWatch(path: path, operation: "open", errno: errno) }
            watched = fileFD
        } else if status.st_mode & S_IFMT == S_IFREG {
            fileFD = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard fileFD >= 0 else { throw .cannotWatch(path: path, operation: "open", errno: errno) }
            // The kernel reads the trigger as a C string: it replaces the
            // last byte written with NUL, so the NUL must be sent.
            let trigger = settings.trigger.last == 0 ? settings.trigger : settings.trigger + [0]
            let written = trigger.withUnsafeBytes { write(fileFD, $0.baseAddress, $0.count) }
            guard written == trigger.count else {
                let code = errno
                close(fileFD)
                throw .cannotWatch(path: path, operation: "writing the trigger '\(String(decoding: settings.trigger.filter { $0 != 0 }, as: UTF8.self))'",
                                   errno: code)
            }
            epollFD = CLinux_epoll_for_priority(fileFD)
            guard epollFD >= 0 else {
                let code = errno
                close(fileFD)
                throw .cannotWatch(path: path, operation: "epoll", errno: code)
            }
            watched = epollFD
        } else {
            throw .unsupportedFile(path: path)
        }
        do {
            source = try application.loop.addFileDescriptor(watched, interest: .read, priority: .system, owner: self) {
                monitor, _ in monitor.readable()
            }
        } catch {
            closeDescriptors()
            throw .cannotWatch(path: path, operation: "watching on the loop (\(error))", errno: EINVAL)
        }
    }

    deinit {
        guard let source else { return }
        let resources = (source: source, file: fileFD, epoll: epollFD)
        application.loop.releaseOnLoop(resources) { resources in
            resources.source.removeIfNeeded()
            if resources.epoll >= 0 { close(resources.epoll) }
            close(resources.file)
        }
    }

    /// Stops watching and closes the file.
    public func stop() {
        guard let source else { return }
        source.removeIfNeeded()
        self.source = nil
        closeDescriptors()
    }

    private func closeDescriptors() {
        if epollFD >= 0 { close(epollFD) }
        if fileFD >= 0 { close(fileFD) }
        epollFD = -1
        fileFD = -1
    }

    private func readable() {
        if epollFD >= 0 {
            switch CLinux_epoll_take(epollFD) {
            case 1: break
            case 2:
                logger.error("memory pressure trigger at \(path) is gone (its cgroup was removed?); no longer watching")
                stop()
                return
            default: return
            }
        } else {
            // A FIFO: whatever was written is one report. At most 64 KiB a
            // callback: a writer that never stops must not keep the loop
            // here (the rest is read on the next pass, as another report).
            var scratch = [UInt8](repeating: 0, count: 4096)
            var total = 0
            for _ in 0..<16 {
                let count = scratch.withUnsafeMutableBytes { read(fileFD, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                total += count
            }
            guard total > 0 else { return }
        }
        pressureReported()
    }

    /// One report of memory pressure: a warning to the app, and a purge
    /// when the app is suspended and the pressure has lasted.
    func pressureReported() {
        reports += 1
        let now = application.loop.now
        do {
            try application.receiveMemoryWarning()
        } catch {
            warningLog.log(.error, "memory warning not delivered: \(error)")
        }
        guard application.state == .suspended else {
            sustained = nil
            return
        }
        guard let (first, last) = sustained, now - last <= purgeAfter else {
            sustained = (now, now)
            return
        }
        sustained = (first, now)
        guard now - first >= purgeAfter else { return }
        sustained = nil
        do {
            try application.perform(.purge)
            purges += 1
            logger.warning("memory pressure for \(purgeAfter) while suspended: the app was purged")
        } catch {
            logger.error("purge under memory pressure failed: \(error)")
        }
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension MemoryPressureMonitor: Sendable {}
