import CLibevent
import CLinux
import CThreadToken
import Glibc
import Synchronization

/// The state that the loop and everything registered on it share.
///
/// Channels and sources keep a strong reference to the core rather than to
/// the loop, so the loop can own them (to free them at shutdown) without a
/// reference cycle. Every mutable field is touched on the loop thread only.
///
/// Fields read or written for every event are `@exclusivity(unchecked)`:
/// the loop's one-thread rule already guarantees exclusive access, and the
/// dynamic checks Swift would otherwise run on class properties measured as
/// the largest single cost of a post→run (the typed post→run row of `compare`).
@usableFromInline
final class LoopCore: @unchecked Sendable {
    /// The token of the thread the loop belongs to (the thread that created
    /// it): never 0 and never given to another thread, even after that one
    /// ends (a `pthread_t` is reused). Immutable.
    @usableFromInline let owner: UInt64
    /// Whether the loop belongs to the process's main thread (for the
    /// off-thread message: an async main is the usual cause there).
    let ownerIsMainThread: Bool

    /// The libevent base; nil once the loop is shut down. Loop thread only.
    @exclusivity(unchecked) @usableFromInline var base: OpaquePointer?

    /// How many drain events are activated and not yet run, per priority.
    /// A drain stops between items when a higher priority has one pending.
    /// Loop thread only.
    @exclusivity(unchecked) @usableFromInline var activeDrains: (Int, Int, Int) = (0, 0, 0)

    /// Bumped for every callback, item or timer the loop runs; `runUntilIdle`
    /// stops after a pass that did not move it. Loop thread only.
    @exclusivity(unchecked) @usableFromInline var workCounter: UInt64 = 0

    /// Channels and sources to free at shutdown, by identity. Loop thread only.
    var registered: [ObjectIdentifier: any LoopRegistered] = [:]

    /// Sources and channels removed while a callback may still be running
    /// in them: kept alive until the janitor event runs, after the current
    /// callback. This is what lets the trampolines call into a source
    /// without retaining it per callback (a handler may remove its own
    /// source, dropping the registry's reference mid-call). Loop thread only.
    @exclusivity(unchecked) var retired: [AnyObject] = []
    /// The janitor: a user event at the lowest priority that empties `retired`.
    @exclusivity(unchecked) var janitorEvent: OpaquePointer?

    /// Measures callbacks when monitoring is on (``MainRunLoop/startMonitoring(hangThreshold:onHang:onDispatch:)``);
    /// nil (the default) costs one check per callback. Loop thread only.
    @exclusivity(unchecked) var monitor: LoopMonitor?

    /// The observers, idle and exit handlers; nil until the first is added.
    /// Loop thread only.
    @exclusivity(unchecked) var passHooks: LoopPassHooks?
    /// Set when a callback must do something before it runs
    /// (``noteWake()``): call the after-waiting observers (see
    /// ``observersAwaitWake``), or read the clock (a per-callback clock,
    /// where it stays set). libevent has no hook between its wait and its
    /// dispatch, so the trampolines check this. Loop thread only.
    @exclusivity(unchecked) @usableFromInline var afterWaitingPending = false
    /// Set when the loop called its before-waiting observers and some
    /// observer wants after-waiting: the first callback after the wait (or
    /// the pass, if nothing ran) calls them. Loop thread only.
    @exclusivity(unchecked) var observersAwaitWake = false
    /// Set while `run()` is inside libevent's own loop (no pass hooks yet):
    /// adding the first hook breaks it, so `run()` goes on pass by pass.
    /// Loop thread only.
    @exclusivity(unchecked) var inLibeventLoop = false

    /// The loop's timer heap (its scheduler's): a callback's clock reading
    /// stays below the earliest deadline.
    let timerHeap = TimerHeap()
    /// The loop's timers, for sources that pause (rate limits); nil once
    /// the loop shut down. Strong, and dropped by the scheduler's
    /// `releaseAll()` (the scheduler holds the core): a weak reference
    /// would give the scheduler a side table, which sends every retain and
    /// release of it, one per timer made and freed, down the runtime's slow
    /// path (the million-timers rows of `compare`).
    var scheduler: TimerScheduler?
    /// How many times a rate limit paused a source. Loop thread only.
    var rateLimitPauses = 0
    /// The inotify descriptor of each priority's path sources, made on
    /// first use (index = priority). Loop thread only.
    var pathHubs: [PathWatchHub?] = [nil, nil, nil]

    /// Whether the loop runs on the manual clock. Immutable.
    let isDeterministic: Bool
    /// Whether the loop reads the monotonic clock once per callback
    /// (``ClockReading/perCallback``). Immutable.
    let readsClockPerCallback: Bool
    /// Whether `now` is the stored instant (``manualClock``) rather than a
    /// fresh reading: deterministic and per-callback loops. Immutable.
    let usesStoredClock: Bool
    /// The manual clock (deterministic loops), or the instant the current
    /// callback began (per-callback loops): moved on the loop thread only,
    /// read from any thread (``LoopClock/now``), hence atomic (a relaxed
    /// load is a plain load).
    let manualClock = Atomic<Int64>(0)
    var manualNow: LoopInstant {
        get { LoopInstant(nanoseconds: manualClock.load(ordering: .relaxed)) }
        set { manualClock.store(newValue.nanoseconds, ordering: .relaxed) }
    }

    init(base: OpaquePointer, deterministic: Bool, clockReading: ClockReading) {
        self.owner = CThreadToken_assign()
        ownerIsMainThread = CLinux_is_main_thread() != 0
        self.base = base
        self.isDeterministic = deterministic
        readsClockPerCallback = !deterministic && clockReading == .perCallback
        usesStoredClock = deterministic || readsClockPerCallback
        if readsClockPerCallback {
            manualClock.store(LoopInstant.monotonicNow().nanoseconds, ordering: .relaxed)
            // Every callback reads the clock (noteWake), for the loop's life.
            afterWaitingPending = true
        }
    }

    /// True on the loop's own thread: the calling thread's token (one
    /// thread-local load, no call) is the owner's. A thread that never made
    /// a loop has token 0, which no owner has.
    @inlinable
    var isLoopThread: Bool { CThreadToken_read() == owner }

    /// The pass hooks, made on first use.
    func hooks() -> LoopPassHooks {
        if let passHooks { return passHooks }
        let made = LoopPassHooks(core: self)
        passHooks = made
        // run() is inside libevent's loop, which has no place for them: end
        // it after this callback; run() then goes on pass by pass.
        if inLibeventLoop, let base { event_base_loopbreak(base) }
        return made
    }

    /// Calls the after-waiting observers if the loop just woke from a wait
    /// they asked to hear about. One load and test on every callback.
    @inline(__always) @usableFromInline
    func noteWake() {
        if afterWaitingPending { wokeUp() }
    }

    /// A per-callback loop's libevent priority for the events that come
    /// from outside the loop (fd sources, signals, other threads' posts):
    /// below every ``LoopPriority``, one callback a pass (the base is made
    /// so). Such a callback runs only when the work made ready before it
    /// (posted work, due timers) has run, as a replay runs what is ready
    /// before its next step; nil on other loops.
    var outsidePriority: Int32? { readsClockPerCallback ? LoopPriority.queueCount : nil }

    /// The libevent priority of an event of `priority`; `outside`: it comes
    /// from outside the loop (see ``outsidePriority``).
    func libeventPriority(_ priority: LoopPriority, outside: Bool) -> Int32 {
        if outside, let outsidePriority { return outsidePriority }
        return Int32(priority.rawValue)
    }

    /// A per-callback loop: bumped when a callback begins; inputs applied
    /// with no change of it between them were applied in one turn, with
    /// nothing run between (a session recorder marks them so). Loop thread only.
    @exclusivity(unchecked) var callbackTurn: UInt64 = 0

    /// ``noteWake()`` at a point of the pass outside any callback (the
    /// loop's own code around the dispatch): the after-waiting observers,
    /// and no clock reading, which belongs to a callback.
    func noteWakeBetweenCallbacks() {
        guard afterWaitingPending else { return }
        if !readsClockPerCallback { afterWaitingPending = false }
        if observersAwaitWake {
            observersAwaitWake = false
            passHooks?.notify(.afterWaiting)
        }
    }

    /// Called from the trampolines only: inside a callback (libevent's
    /// running event is set; asking for it outside one reads a null pointer).
    @inline(never) @usableFromInline
    func wokeUp() {
        if readsClockPerCallback { beginCallback() } else { afterWaitingPending = false }
        if observersAwaitWake {
            observersAwaitWake = false
            passHooks?.notify(.afterWaiting)
        }
    }

    /// A per-callback clock: a callback from outside the loop reads the
    /// monotonic clock as it begins, held back to just before the earliest
    /// timer that is due and has not run yet, and never behind the instant
    /// of the callback before. So what a callback does happens, on the loop's clock, after
    /// every timer that ran before it and before every timer that runs
    /// after it: the order a replay on the manual clock reproduces
    /// (a replay runs what is due by an instant before that instant's input).
    func beginCallback() {
        guard let base else { return }
        let running = CLibevent_running_priority(base)
        guard running >= 0 else { return }
        callbackTurn &+= 1
        // Only what comes from outside moves the clock: work the loop made
        // ready runs at the instant of what made it, as in a replay.
        if running == outsidePriority { readClockForCallback() }
    }

    func readClockForCallback() {
        var reading = LoopInstant.monotonicNow().nanoseconds
        if let earliest = timerHeap.first?.deadline, earliest <= reading { reading = earliest - 1 }
        if reading > manualClock.load(ordering: .relaxed) { manualClock.store(reading, ordering: .relaxed) }
    }

    /// A per-callback clock: a timer runs at its deadline (the clock never
    /// goes back: a timer that became due before the instant of an earlier
    /// callback runs at that instant).
    func enterTimerCallback(deadline: Int64) {
        if deadline > manualClock.load(ordering: .relaxed) { manualClock.store(deadline, ordering: .relaxed) }
    }

    /// Whether libevent has callbacks activated and not yet run.
    var hasActiveEvents: Bool {
        guard let base else { return false }
        return event_base_get_num_events(base, EVENT_BASE_COUNT_ACTIVE) > 0
    }

    /// Removes a source or channel from the registry; it stays alive until
    /// the current callback is over (see `retired`).
    func unregister(_ object: AnyObject) {
        guard let removed = registered.removeValue(forKey: ObjectIdentifier(object)) else { return }
        retired.append(removed)
        if retired.count == 1, let janitorEvent { event_active(janitorEvent, 0, 0) }
    }

    /// The janitor's callback: drops what was retired.
    func releaseRetired() { retired.removeAll() }

    /// The clock itself, not a per-callback loop's stored instant: the
    /// manual clock, or a fresh monotonic reading. What decides which
    /// timers are due.
    var clockReading: LoopInstant { isDeterministic ? manualNow : .monotonicNow() }

    /// Now on the loop's clock: the monotonic clock, the manual one, or the
    /// instant the current callback began.
    var now: LoopInstant { usesStoredClock ? manualNow : .monotonicNow() }

    /// Fails with a message naming the method and the rule unless called
    /// on the loop thread.
    func preconditionInLoop(function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        guard !isLoopThread else { return }
        offLoopThread(function: function, file: file, line: line)
    }

    @inlinable
    var isShutDown: Bool { base == nil }

    /// The failure of ``preconditionInLoop(function:file:line:)``.
    func offLoopThread(function: StaticString, file: StaticString, line: UInt) -> Never {
        // The usual way to get here on the main loop is an `async` main:
        // Swift parks the main thread in dispatch_main(), code after an
        // `await` runs on another thread, and no loop runs on the main
        // thread at all. A hop would not help; the fix is a synchronous main.
        let mainLoopHint = ownerIsMainThread
            ? " If this is MainRunLoop.main after an `await` in `static func main() async`: an async main never runs "
                + "the main loop (Swift parks the main thread in dispatch_main()), so make main() synchronous, call "
                + "MainRunLoop.main.run() there, and start async code with MainRunLoop.runMain { ... } or a Task."
            : ""
        preconditionFailure("\(function) (\(file)) must be called on its loop's thread: a loop and everything bound to it "
                            + "(sources, timers, channels, applications) are used on the thread that created the loop; "
                            + "from elsewhere, hop with loop.execute." + mainLoopHint, file: file, line: line)
    }

    @usableFromInline
    func drainActivated(_ priority: LoopPriority) {
        switch priority {
        case .system: activeDrains.0 += 1
        case .input: activeDrains.1 += 1
        case .app: activeDrains.2 += 1
        }
    }

    @inlinable
    func drainStarted(_ priority: LoopPriority) {
        switch priority {
        case .system: activeDrains.0 -= 1
        case .input: activeDrains.1 -= 1
        case .app: activeDrains.2 -= 1
        }
    }

    /// Whether posted work is waiting to run, at any priority.
    var hasActiveDrains: Bool { activeDrains != (0, 0, 0) }

    /// Whether ready work of a strictly higher priority is waiting.
    @inlinable
    func hasPendingWork(above priority: LoopPriority) -> Bool {
        switch priority {
        case .system: return false
        case .input: return activeDrains.0 > 0
        case .app: return activeDrains.0 > 0 || activeDrains.1 > 0
        }
    }
}

/// Something registered on a loop that owns libevent objects, freed when it
/// is removed or when the loop shuts down.
protocol LoopRegistered: AnyObject {
    /// Frees the libevent objects and file descriptors it owns. Idempotent.
    func releaseLoopResources()
}

/// Converts a libevent/POSIX failure into the loop's error type.
func systemError(_ operation: String) -> MainLoopError {
    .system(operation: operation, errno: errno)
}
