import AppLifecycle
import Glibc
import Logging
import MainLoop
import ServiceLogging

/// Job control as suspension: Ctrl-Z and `fg` behave like the home button
/// and the app switcher.
///
/// - SIGTSTP sends the app home (active → background → suspended when no
///   background work is open), then stops the process with SIGSTOP.
/// - SIGCONT re-reads what may have changed while the process was stopped
///   (the `reload` closure, e.g. ``LinuxSources/reload()``: defaults written by another process,
///   the locale and zone files, a clock set), which the suspended app holds,
///   then brings it to the foreground: one merged notification per kind,
///   after willEnterForeground. Only an app that SIGTSTP sent home is
///   brought back; a SIGCONT after someone else's SIGSTOP only re-reads.
///
/// A process frozen by the cgroup freezer (`systemctl freeze`) gets no
/// signal; the supervisor sends `home` and `foreground` over the control
/// socket around the freeze instead (the guide "Running MainLoop the way Linux runs services").
/// Loop thread only; installs signal sources, so one per process.
public final class JobControl {
    /// Whether the app is home because of SIGTSTP (and SIGCONT brings it back).
    public var sentHomeByStop: Bool { sentHome.isAway }
    private var sentHome = SentHome()
    private let application: Application
    private let reload: () -> Void
    private let logger: Logger
    /// Any process of the user can send these signals at any rate.
    private let signalLog: RateLimitedLog
    private let stopProcess: () -> Void
    private var sources: [SignalSource] = []

    /// Installs the SIGTSTP and SIGCONT handlers on the application's loop.
    /// - Parameters:
    ///   - application: the app that goes home and comes back.
    ///   - logger: where stops and continues are logged.
    ///   - reload: re-reads the sources after a continue (before the app
    ///     comes back, so what changed meanwhile is held and merged).
    ///   - stopProcess: stops the process (default: SIGSTOP to
    ///     itself; it returns when the process is continued).
    public init(application: Application, logger: Logger, reload: @escaping () -> Void = {},
                stopProcess: @escaping () -> Void = { kill(getpid(), SIGSTOP) }) throws(MainLoopError) {
        self.application = application
        self.reload = reload
        self.logger = logger
        signalLog = RateLimitedLog(logger: logger, loop: application.loop)
        self.stopProcess = stopProcess
        sources.append(try application.loop.addSignal(SIGTSTP) { [weak self] in self?.stopRequested() })
        sources.append(try application.loop.addSignal(SIGCONT) { [weak self] in self?.continued() })
    }

    /// Removes the handlers (SIGTSTP then stops the process at once again).
    public func remove() {
        for source in sources where !source.isRemoved {
            do { try source.remove() } catch { logger.error("removing a job-control signal source: \(error)") }
        }
        sources = []
    }

    private func stopRequested() {
        do {
            try sentHome.sendHome(application)
        } catch {
            signalLog.log(.error, "SIGTSTP: cannot send the app home: \(error)")
        }
        if application.state == .background {
            signalLog.log(.notice, "SIGTSTP: the app has background work open; it is stopped with the process, not suspended")
        }
        signalLog.log(.info, "stopped by SIGTSTP (app \(application.state.rawValue)); continue with SIGCONT (fg)")
        stopProcess()
    }

    private func continued() {
        reload()
        do {
            try sentHome.bringBack(application)
        } catch {
            signalLog.log(.error, "SIGCONT: cannot bring the app to the foreground: \(error)")
        }
        signalLog.log(.info, "continued (app \(application.state.rawValue))")
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension JobControl: Sendable {}
