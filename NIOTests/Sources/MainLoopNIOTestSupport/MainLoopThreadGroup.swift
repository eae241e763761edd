import Dispatch
import MainLoop
import MainLoopNIO
import NIOCore

/// An `EventLoopGroup` of real-clock ``MainLoop/MainRunLoop``s, each run by
/// its own ``MainLoop/LoopThread``: what SwiftNIO's tests get from
/// `MultiThreadedEventLoopGroup`, made of MainLoop's loops.
public final class MainLoopThreadGroup: EventLoopGroup, Sendable {
    private let threads: [LoopThread]
    private let views: [MainLoopEventLoop]
    private let cursor = LockedValue(0)
    private let stopped = LockedValue(false)

    /// One group for a whole test process, never shut down (like
    /// `MultiThreadedEventLoopGroup.singleton`).
    public static let singleton = MainLoopThreadGroup(numberOfThreads: 2)

    /// Starts `numberOfThreads` loop threads.
    public init(numberOfThreads: Int) {
        precondition(numberOfThreads > 0, "a group needs at least one loop")
        threads = (0..<numberOfThreads).map { _ in
            do {
                return try LoopThread.start()
            } catch {
                fatalError("cannot start a loop thread: \(error)")
            }
        }
        views = threads.map { $0.loop.eventLoop }
    }

    /// The loops in turn.
    public func next() -> EventLoop {
        views[cursor.withLock { cursor in
            defer { cursor = (cursor + 1) % views.count }
            return cursor
        }]
    }

    /// The caller's loop when it runs on one of the group's, else the next.
    public func any() -> EventLoop {
        views.first { $0.inEventLoop } ?? next()
    }

    public func makeIterator() -> EventLoopIterator {
        EventLoopIterator(views)
    }

    /// Shuts the views down, then stops and joins the threads (each loop
    /// runs what was posted, then shuts down on its own thread), then calls
    /// back on `queue`.
    public func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable (Error?) -> Void) {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return queue.async { callback(EventLoopError.shutdown) } }
        let threads = self.threads
        let views = self.views
        DispatchQueue.global().async {
            var failure: Error?
            for view in views {
                let done = DispatchSemaphore(value: 0)
                view.shutdownGracefully(queue: .global()) { _ in done.signal() }
                done.wait()
            }
            for thread in threads {
                do { try thread.stopAndJoin() } catch { failure = failure ?? error }
            }
            let result = failure
            queue.async { callback(result) }
        }
    }
}
