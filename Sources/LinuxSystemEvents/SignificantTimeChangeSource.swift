import CLinux
import Glibc
import MainLoop
import SystemNotifications

/// Posts `significantTimeChange` events from the real system (BEHAVIOUR.md §4):
///
/// - `clockSet`: CLOCK_REALTIME was set. A timerfd armed far in the future
///   with `TFD_TIMER_CANCEL_ON_SET` becomes readable with ECANCELED when
///   the clock is set; it is re-armed each time.
/// - `midnight`: a loop timer at the next local midnight.
/// - `timeZone`: the zone identity changed (the zone file was replaced or
///   relinked, or TZ differs at a check).
/// - `daylightSaving`: a loop timer at the zone's next DST transition.
///
/// Each is re-armed after it fires; a clock set or zone change re-arms the
/// midnight and DST timers too, since both are wall-clock instants. The
/// wall clock is injectable for deterministic tests.
///
/// A zone file that cannot be read now (replaced by a FIFO, a device or a
/// huge file) is reported through `onProblem` and the last good zone stays,
/// so nothing is posted until it reads again. Loop thread only; may be
/// released on any thread (its cleanup runs on the loop).
public final class SignificantTimeChangeSource {
    private let loop: MainRunLoop
    private let clock: any WallClock
    private let post: (SystemEvent) -> Void
    private let onProblem: (String) -> Void
    private var midnightTimer: LoopTimer!
    private var daylightSavingTimer: LoopTimer!
    private var clockSetFD: Int32 = -1
    private var clockSetSource: FileDescriptorSource?
    private var zoneIdentity: String
    /// The zone files' watches (removed when the source is released).
    private var zoneWatches: [FileWatcher.Token] = []
    private let watcher: FileWatcher?

    /// - Parameters:
    ///   - loop: the loop whose timers fire at midnight and DST transitions.
    ///   - clock: the wall clock and zone (``SystemWallClock`` for real ones).
    ///   - zoneFiles: the files whose change means a zone change.
    ///   - watcher: watches the zone files (`zoneFiles`); nil to skip.
    ///   - detectClockSet: watch for CLOCK_REALTIME being set (real clock only).
    ///   - onProblem: what this source could not do (a zone file it cannot
    ///     read or watch, a clock-set timer it cannot re-arm); it goes on
    ///     with what it has. May repeat: rate-limit what you log.
    ///   - post: receives each event on the loop thread.
    public init(loop: MainRunLoop, clock: any WallClock, watcher: FileWatcher?,
                zoneFiles: [String] = ["/etc/localtime", "/etc/timezone"], detectClockSet: Bool = true,
                onProblem: @escaping (String) -> Void = { _ in },
                post: @escaping (SystemEvent) -> Void) throws(MainLoopError) {
        self.loop = loop
        self.clock = clock
        self.post = post
        self.onProblem = onProblem
        switch clock.readZoneIdentity() {
        case .success(let identity): zoneIdentity = identity
        case .failure(let problem):
            // Unlike any identity read later, so a zone that becomes
            // readable is a change (what `zoneIdentity()` says then too).
            zoneIdentity = "unreadable: \(problem)"
            onProblem("time zone: \(problem); keeping the zone the C library has")
        }
        self.watcher = watcher
        // Weak captures: the source may be released on another thread, and
        // what fires before its cleanup runs on the loop then finds nobody.
        midnightTimer = loop.makeTimer { [weak self] in
            guard let self else { return }
            self.post(.significantTimeChange(.midnight))
            self.armMidnight()
        }
        daylightSavingTimer = loop.makeTimer { [weak self] in
            guard let self else { return }
            self.post(.significantTimeChange(.daylightSaving))
            self.armDaylightSaving()
        }
        if let watcher {
            for file in zoneFiles {
                do {
                    zoneWatches.append(try watcher.watch(file) { [weak self] in self?.checkTimeZone() })
                } catch {
                    // A missing directory only means that file cannot change
                    // here; the zone is still checked at a reload or a wake.
                    onProblem("time zone: not watching \(file): \(error)")
                }
            }
        }
        if detectClockSet { try startClockSetDetection() }
        armMidnight()
        // The DST search (about 400 `localtime_r` calls, a tenth of a
        // service's start-up) waits for the loop's first turn, from this
        // instant: a transition in between fires at once, none is lost.
        daylightSavingSearchFrom = clock.now()
        try loop.executeInLoop(priority: .system) { [weak self] in self?.armPendingDaylightSaving() }
    }

    deinit {
        // Released on any thread: timers, the clock-set source and the zone
        // watches go away on the loop thread, then the descriptor is closed.
        let resources = (timers: [midnightTimer, daylightSavingTimer], source: clockSetSource, fd: clockSetFD,
                         watcher: watcher, watches: zoneWatches)
        loop.releaseOnLoop(resources) { resources in
            for timer in resources.timers { timer?.cancel() }
            resources.source?.removeIfNeeded()
            if resources.fd >= 0 { close(resources.fd) }
            for token in resources.watches { resources.watcher?.unwatch(token) }
        }
    }

    /// Re-reads the zone (TZ and zone files) and posts `timeZone` if it
    /// changed. Called on zone file changes; call it after changing TZ.
    public func checkTimeZone() {
        let identity: String
        switch clock.readZoneIdentity() {
        case .success(let read): identity = read
        case .failure(let problem):
            return onProblem("time zone: \(problem); keeping the last zone read")
        }
        guard identity != zoneIdentity else { return }
        zoneIdentity = identity
        post(.significantTimeChange(.timeZone))
        armMidnight()
        armDaylightSaving()
    }

    /// Re-reads everything this source watches, for a service that was not
    /// looking (stopped by SIGTSTP, or asked to reload): the zone, a clock
    /// set meanwhile, and a local midnight that passed. What changed is
    /// posted now, before the timers and descriptors that would notice it
    /// later (they then find nothing new).
    public func recheck() {
        checkTimeZone()
        if clockSetFD >= 0 { clockSetReadable() }
        if clock.now() >= nextMidnight {
            post(.significantTimeChange(.midnight))
            armMidnight()
        }
    }

    /// When the midnight timer is due, in wall-clock seconds (for tests and logs).
    public private(set) var nextMidnight: Double = 0
    /// When the DST timer is due, if the zone has a transition ahead. The
    /// first search runs in the loop's first turn after the source was
    /// made, or at the first read of this property if that comes sooner.
    public var nextDaylightSavingTransition: Double? {
        armPendingDaylightSaving()
        return daylightSavingTransition
    }
    private var daylightSavingTransition: Double?
    /// Where the first DST search starts, until it has run.
    private var daylightSavingSearchFrom: Double?

    private func armMidnight() {
        let now = clock.now()
        nextMidnight = clock.nextLocalMidnight(after: now)
        midnightTimer.schedule(after: .seconds(fractional: max(0, nextMidnight - now)))
    }

    private func armPendingDaylightSaving() {
        guard let from = daylightSavingSearchFrom else { return }
        armDaylightSaving(searchingFrom: from)
    }

    private func armDaylightSaving(searchingFrom from: Double? = nil) {
        daylightSavingSearchFrom = nil
        let now = clock.now()
        daylightSavingTransition = clock.nextDaylightSavingTransition(after: from ?? now)
        if let transition = daylightSavingTransition {
            daylightSavingTimer.schedule(after: .seconds(fractional: max(0, transition - now)))
        } else {
            daylightSavingTimer.cancel()
        }
    }

    private func startClockSetDetection() throws(MainLoopError) {
        clockSetFD = CLinux_realtime_timerfd()
        guard clockSetFD >= 0 else { throw .system(operation: "timerfd_create", errno: errno) }
        try armClockSetTimer()
        clockSetSource = try loop.addFileDescriptor(clockSetFD, interest: .read, priority: .system, owner: self) { source, _ in
            source.clockSetReadable()
        }
    }

    private func armClockSetTimer() throws(MainLoopError) {
        // An absolute expiry far in the future: it never fires, it only gets
        // cancelled when CLOCK_REALTIME is set.
        guard CLinux_arm_cancel_on_set(clockSetFD, Int(Int32.max)) == 0 else {
            throw .system(operation: "timerfd_settime", errno: errno)
        }
    }

    private func clockSetReadable() {
        var expirations: UInt64 = 0
        let result = read(clockSetFD, &expirations, 8)
        guard result < 0, errno == ECANCELED else { return }
        do {
            try armClockSetTimer()
        } catch {
            // Without the timer armed no later clock set is seen: say so
            // (this one is still posted).
            onProblem("clock set: \(error); later clock sets are noticed only at a reload")
        }
        post(.significantTimeChange(.clockSet))
        armMidnight()
        armDaylightSaving()
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension SignificantTimeChangeSource: Sendable {}
