import AppLifecycle
import MainLoop

extension MainRunLoop {
    /// This loop as a SwiftNIO `EventLoop`, at ``/MainLoop/LoopPriority/app``
    /// priority (where ``/MainLoop/MainRunLoop/execute(priority:_:)`` posts
    /// by default). Hold on to it: the same object comes back while anyone
    /// does, and asking costs a lookup.
    public var eventLoop: MainLoopEventLoop { eventLoop(priority: .app) }

    /// This loop as a SwiftNIO `EventLoop` whose work runs at `priority`.
    /// The views of one loop share their thread, clock and shutdown, and
    /// each is "in its event loop" on that thread: a promise completed there
    /// runs its callbacks at once, whatever the view (as NIO does on any
    /// loop). The priority orders what is posted: `execute`, `submit`,
    /// scheduled work, and completions that arrive from other threads.
    public func eventLoop(priority: LoopPriority) -> MainLoopEventLoop {
        attachment(EventLoopState.self) { EventLoopState() }.view(of: self, priority: priority)
    }
}

extension Application {
    /// This application's loop as a SwiftNIO `EventLoop` whose work is app
    /// code: it runs at ``/MainLoop/LoopPriority/app`` priority while the app
    /// runs code, waits for the resume while the app is suspended (after the
    /// timers that missed, in order, as posted app work does), and is dropped
    /// and counted in ``/AppLifecycle/Application/droppedAppWorkCount`` when
    /// the app is not running. A scheduled task comes due on the loop's
    /// clock; due while suspended, it runs at the resume. Everything else is
    /// as ``MainLoop/MainRunLoop/eventLoop``.
    /// - Precondition: called on the loop thread.
    public var eventLoop: MainLoopEventLoop {
        loop.preconditionInLoop()
        return loop.attachment(EventLoopState.self) { EventLoopState() }.view(of: self)
    }
}
