/// The points of a loop pass an observer can watch, as CFRunLoop names
/// them (`kCFRunLoopEntry` ... `kCFRunLoopExit`).
///
/// A pass of ``MainRunLoop/run()`` or ``MainRunLoop/runOnce()`` goes:
/// ``beforeTimers``, due timers are handed to dispatch, ``beforeSources``,
/// the idle handlers when nothing is ready, ``beforeWaiting`` (only when the
/// loop is about to block), the wait, ``afterWaiting`` (before the first
/// callback of what woke it), then everything ready runs, highest priority
/// first. ``entry`` and ``exit`` bracket a whole `run()`. BEHAVIOUR.md §10
/// has the full contract, the deterministic loop's included.
public struct LoopActivity: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `run()` starts.
    public static let entry = LoopActivity(rawValue: 1 << 0)
    /// A pass is about to hand due timers to dispatch.
    public static let beforeTimers = LoopActivity(rawValue: 1 << 1)
    /// A pass is about to run what is ready.
    public static let beforeSources = LoopActivity(rawValue: 1 << 2)
    /// The loop is about to block: nothing is ready and the idle handlers
    /// are done. Where batched output is flushed and another loop prepared.
    public static let beforeWaiting = LoopActivity(rawValue: 1 << 3)
    /// The loop woke up, before the first callback runs.
    public static let afterWaiting = LoopActivity(rawValue: 1 << 4)
    /// `run()` is about to return (after the exit handlers and their work).
    public static let exit = LoopActivity(rawValue: 1 << 5)
    /// Every activity.
    public static let all: LoopActivity = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]

    /// "beforeWaiting" and the like; a set lists its members.
    public var description: String {
        let names: [(LoopActivity, String)] = [(.entry, "entry"), (.beforeTimers, "beforeTimers"),
                                               (.beforeSources, "beforeSources"), (.beforeWaiting, "beforeWaiting"),
                                               (.afterWaiting, "afterWaiting"), (.exit, "exit")]
        return names.filter { contains($0.0) }.map(\.1).joined(separator: ", ")
    }
}

/// A handler called at the ``LoopActivity`` points it asked for, on the
/// loop thread, in the order observers were added. Created with
/// ``MainRunLoop/addObserver(activities:repeats:handler:)``; a one-shot
/// observer removes itself after its first call. Loop thread only.
public final class LoopObserver {
    /// The activities it is called for.
    public let activities: LoopActivity
    /// Whether it stays after its first call.
    public let repeats: Bool
    /// Whether it was removed (by ``remove()``, after a one-shot call, or at shutdown).
    public private(set) var isRemoved = false

    let handler: (LoopActivity) -> Void
    /// Held strongly; the loop's shutdown empties the hooks, which ends the cycle.
    private let hooks: LoopPassHooks

    init(activities: LoopActivity, repeats: Bool, hooks: LoopPassHooks, handler: @escaping (LoopActivity) -> Void) {
        self.activities = activities
        self.repeats = repeats
        self.hooks = hooks
        self.handler = handler
    }

    /// Stops the calls; removing it from its own handler is allowed.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed.
    public func remove() throws(MainLoopError) {
        hooks.core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        markRemoved()
        hooks.observerRemoved()
    }

    func markRemoved() { isRemoved = true }
}

@available(*, unavailable)
extension LoopObserver: Sendable {}
