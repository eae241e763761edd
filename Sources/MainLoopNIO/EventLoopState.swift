import AppLifecycle
import MainLoop
import NIOCore
import Synchronization

/// The state every SwiftNIO view of one loop shares, kept with the loop as
/// a ``/MainLoop/LoopAttachment``: whether the views are shut down, the
/// scheduled work still pending (so a shutdown can fail it), and the views
/// themselves, held weakly (each view holds the loop, and the loop holds
/// this state).
///
/// Why `@unchecked Sendable` is safe: `nextID` and `dropped` are atomics,
/// `views` and `table` are under their locks, and `applicationViews` is
/// touched only on the loop thread (``view(of:)-(Application)`` checks it).
final class EventLoopState: LoopAttachment, @unchecked Sendable {
    /// Whether the views are shut down, and the work they still owe.
    struct Table {
        var isClosed = false
        var pending: [UInt64: ScheduledLoopWork] = [:]
    }

    let table = LockedValue(Table())
    /// Identifiers for scheduled work (custom `NIOScheduledCallback` ids).
    let nextID = Atomic<UInt64>(1)
    /// Work that had nowhere to run: `execute` after the loop shut down.
    let dropped = Atomic<Int>(0)
    /// One weak view per ``/MainLoop/LoopPriority`` (index = raw value).
    private let views = LockedValue<[WeakView]>(Array(repeating: WeakView(), count: LoopPriority.allCases.count))
    /// One weak gated view per application. Loop thread only.
    var applicationViews: [ObjectIdentifier: WeakView] = [:]

    init() {}

    /// The view of `loop` at `priority`: the one already made while anyone
    /// holds it, so `loop.eventLoop === loop.eventLoop`.
    func view(of loop: MainRunLoop, priority: LoopPriority) -> MainLoopEventLoop {
        views.withLock { views in
            if let view = views[priority.rawValue].view { return view }
            let view = MainLoopEventLoop(loop: loop, priority: priority, state: self)
            views[priority.rawValue].view = view
            return view
        }
    }

    /// The gated view of `application` (loop thread): the one already made
    /// while anyone holds it.
    func view(of application: Application) -> MainLoopEventLoop {
        let key = ObjectIdentifier(application)
        if let view = applicationViews[key]?.view, view.gate?.belongs(to: application) == true { return view }
        applicationViews = applicationViews.filter { $0.value.view != nil }
        let view = MainLoopEventLoop(loop: application.loop, priority: .app, gate: AppWorkGate(application), state: self)
        applicationViews[key] = WeakView(view: view)
        return view
    }

    var isClosed: Bool { table.withLock { $0.isClosed } }

    /// Records `work` as pending; false once closed (then it is not).
    func register(_ work: ScheduledLoopWork) -> Bool {
        table.withLock { table in
            guard !table.isClosed else { return false }
            table.pending[work.id] = work
            return true
        }
    }

    /// Takes `id` out of the pending work: the one caller that gets it
    /// (firing, cancelling or shutting down) decides its fate.
    func take(_ id: UInt64) -> ScheduledLoopWork? {
        table.withLock { $0.pending.removeValue(forKey: id) }
    }

    func isPending(_ id: UInt64) -> Bool {
        table.withLock { $0.pending[id] != nil }
    }

    /// Refuses new work from now on and hands back what is still pending.
    func close() -> [ScheduledLoopWork] {
        table.withLock { table in
            table.isClosed = true
            defer { table.pending.removeAll() }
            return table.pending.values.sorted { $0.id < $1.id }
        }
    }

    func loopDidShutDown() {
        // The loop released its timers already; only the owners are left to tell.
        for work in close() { work.abandon() }
    }
}

/// A weak reference to a view, for ``EventLoopState``'s table.
struct WeakView {
    weak var view: MainLoopEventLoop?
}
