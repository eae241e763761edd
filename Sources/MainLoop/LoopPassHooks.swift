import CLibevent

/// The loop's observers, idle handlers and exit handlers: what runs around
/// a pass rather than because something became ready.
///
/// Made when the first of them is added (``LoopCore/passHooks``), so a loop
/// that never uses them pays one nil check per pass. Everything here runs on
/// the loop thread. Handlers may add and remove observers, idle and exit
/// handlers (themselves included) while they run: lists are walked by index
/// over what was there when the walk began, and removed entries are marked
/// and dropped between walks, so nothing is skipped, run twice or freed
/// while it runs.
///
/// The fields read on every pass are `@exclusivity(unchecked)`: the loop's
/// one-thread rule is the guarantee, and the runtime's checks were a tenth
/// of a pass (the idle pass row of `compare`, beside libuv's).
final class LoopPassHooks {
    let core: LoopCore

    @exclusivity(unchecked) private var observers: [LoopObserver] = []
    /// The activities some installed observer asked for.
    @exclusivity(unchecked) private var observed: LoopActivity = []
    /// Observers marked removed and not yet dropped from `observers`.
    @exclusivity(unchecked) private var removedObservers = 0
    /// Whether `notify` is walking `observers` (drop removed ones after).
    @exclusivity(unchecked) private var notifying = 0

    @exclusivity(unchecked) private var idleSources: [IdleSource] = []
    /// Idle sources marked removed and not yet dropped from `idleSources`.
    @exclusivity(unchecked) private var removedIdleSources = 0
    /// The next idle handler of the round in progress and where the round
    /// ends (handlers added during a round wait for the next); nil between
    /// rounds.
    @exclusivity(unchecked) private var idleRound: (next: Int, end: Int)?

    private var exitHandlers: [ExitHandler] = []
    private var exitSequence: UInt64 = 0

    init(core: LoopCore) { self.core = core }

    // MARK: Observers

    func addObserver(activities: LoopActivity, repeats: Bool,
                     handler: @escaping (LoopActivity) -> Void) -> LoopObserver {
        let observer = LoopObserver(activities: activities, repeats: repeats, hooks: self, handler: handler)
        observers.append(observer)
        observed.formUnion(activities)
        return observer
    }

    func observerRemoved() {
        removedObservers += 1
        if notifying == 0 { dropRemovedObservers() }
    }

    /// Whether an observer wants `activity` (one load and test).
    @inline(__always)
    func observes(_ activity: LoopActivity) -> Bool { observed.contains(activity) }

    /// Calls the observers of `activity`, in the order they were added.
    @inline(__always)
    func notify(_ activity: LoopActivity) {
        if observed.contains(activity) { callObservers(activity) }
    }

    @inline(never)
    private func callObservers(_ activity: LoopActivity) {
        notifying += 1
        let count = observers.count
        var index = 0
        while index < count {
            let observer = observers[index]
            index += 1
            guard !observer.isRemoved, observer.activities.contains(activity) else { continue }
            if !observer.repeats {
                observer.markRemoved()
                removedObservers += 1
            }
            measure(.observer) { observer.handler(activity) }
            if core.isShutDown { break }
        }
        notifying -= 1
        if notifying == 0, removedObservers > 0 { dropRemovedObservers() }
    }

    private func dropRemovedObservers() {
        observers.removeAll(where: \.isRemoved)
        removedObservers = 0
        observed = observers.reduce(into: []) { $0.formUnion($1.activities) }
    }

    // MARK: Idle

    func addIdle(repeats: Bool, handler: @escaping () -> Void) -> IdleSource {
        let source = IdleSource(repeats: repeats, hooks: self, handler: handler)
        idleSources.append(source)
        return source
    }

    /// Whether an idle handler waits to run.
    var hasIdleWork: Bool { idleRound != nil || !idleSources.isEmpty }

    /// An idle source was removed (it is dropped before the next round).
    func idleSourceRemoved() { removedIdleSources += 1 }

    /// Runs idle handlers, in the order added, until one makes work ready
    /// or every handler of the round has run once. A round cut short goes
    /// on where it stopped the next time the loop idles, so a handler that
    /// posts work every time cannot starve those after it.
    func runIdleHandlers() {
        var round: (next: Int, end: Int)
        if let inProgress = idleRound {
            round = inProgress
        } else {
            if removedIdleSources > 0 {
                idleSources.removeAll(where: \.isRemoved)
                removedIdleSources = 0
            }
            guard !idleSources.isEmpty else { return }
            round = (0, idleSources.count)
        }
        while round.next < round.end {
            let source = idleSources[round.next]
            round.next += 1
            guard !source.isRemoved else { continue }
            if !source.repeats { source.markRemoved() }
            idleRound = round
            measure(.idle) { source.handler() }
            if core.isShutDown { return }
            if core.hasActiveEvents { break }
        }
        idleRound = round.next < round.end ? round : nil
    }

    // MARK: Exit

    func addExitHandler(priority: LoopPriority, handler: @escaping () -> Void) -> ExitHandler {
        exitSequence += 1
        let exitHandler = ExitHandler(priority: priority, sequence: exitSequence, hooks: self, handler: handler)
        exitHandlers.append(exitHandler)
        return exitHandler
    }

    /// Takes the exit handler to run next: the most urgent priority, then
    /// the earliest added.
    func takeNextExitHandler() -> ExitHandler? {
        exitHandlers.removeAll(where: \.isRemoved)
        guard let index = exitHandlers.indices.min(by: { left, right in
            let (a, b) = (exitHandlers[left], exitHandlers[right])
            return a.priority.rawValue != b.priority.rawValue ? a.priority.rawValue < b.priority.rawValue
                                                              : a.sequence < b.sequence
        }) else { return nil }
        let next = exitHandlers.remove(at: index)
        next.markRemoved()
        return next
    }

    /// Runs an exit handler (taken with ``takeNextExitHandler()``).
    func run(_ exitHandler: ExitHandler) {
        measure(.exitHandler) { exitHandler.handler() }
    }

    // MARK: Shutdown

    /// Drops everything (the loop shuts down); what was added reads as removed.
    func removeAll() {
        observers.forEach { $0.markRemoved() }
        idleSources.forEach { $0.markRemoved() }
        exitHandlers.forEach { $0.markRemoved() }
        observers.removeAll()
        idleSources.removeAll()
        exitHandlers.removeAll()
        observed = []
        idleRound = nil
        removedIdleSources = 0
    }

    private func measure(_ kind: LoopSourceKind, _ body: () -> Void) {
        guard let monitor = core.monitor else { return body() }
        monitor.measure(kind, .app, body)
    }
}
