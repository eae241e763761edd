import CLibevent
import CLinux
import Glibc

/// How the main dispatch queue is tied to ``MainRunLoop/main``: its eventfd,
/// watched as an fd source at app priority, and the hold of a suspended app.
/// Loop thread only.
final class MainQueueLink {
    /// libdispatch's main-queue eventfd.
    let handle: Int32
    /// The source watching it.
    var source: FileDescriptorSource?
    /// While held: called (once per hold) when main-queue work becomes ready.
    var onReadyWhileHeld: (() -> Void)?
    /// Whether work became ready while held (it runs at release).
    var readyWhileHeld = false
    /// How often libdispatch signalled while held (a deterministic
    /// `runUntilIdle` waits for resumed tasks to arrive in the held queue).
    var signalsWhileHeld = 0

    init(handle: Int32) { self.handle = handle }
}

extension MainRunLoop {
    /// The main loop, once made (``main`` or ``makeMain(deterministic:)``).
    private static let mainLoop = LockedValue<MainRunLoop?>(nil)

    /// The loop of the process's main thread: created on first use, which
    /// must be on the main thread (a precondition; afterwards `main` may be
    /// read from any thread, e.g. to post work).
    ///
    /// While it runs, the main dispatch queue runs on it: `DispatchQueue.main`
    /// blocks and `@MainActor` jobs run on the main thread, at app priority,
    /// in FIFO order among themselves, interleaved with the loop's other app
    /// work in the order the loop sees them ready (the main queue is drained
    /// when libdispatch signals it, at the loop's next poll; a block and a
    /// `loop.execute` issued back to back may run in either order). This is
    /// what UIKit's main run loop does for an iOS app.
    ///
    /// Run it from a synchronous `main()`: an `async` main parks the main
    /// thread in `dispatch_main()`, and then no loop runs there.
    public static var main: MainRunLoop {
        do {
            return try makeMain(deterministic: false)
        } catch {
            preconditionFailure("MainRunLoop.main could not be created: \(error)")
        }
    }

    /// Makes the main loop, or returns it if it exists (whatever its clock).
    /// Call it first thing on the main thread to give the main loop the
    /// manual clock (deterministic tests of `@MainActor` code); ``main``
    /// then returns that loop.
    /// - Precondition: called on the main thread the first time.
    /// - Throws: ``MainLoopError/system(operation:errno:)`` when the loop or
    ///   the main queue's link cannot be set up.
    @discardableResult
    public static func makeMain(deterministic: Bool) throws(MainLoopError) -> MainRunLoop {
        try mainLoop.withLock { (main: inout MainRunLoop?) throws(MainLoopError) -> MainRunLoop in
            if let main { return main }
            precondition(isMainThread,
                         "MainRunLoop.main is created on first use, and that must be on the process's main thread")
            let loop = try MainRunLoop(deterministic: deterministic)
            try loop.attachMainQueue()
            main = loop
            return loop
        }
    }

    /// Whether the calling thread is the process's main thread.
    public static var isMainThread: Bool { CLinux_is_main_thread() != 0 }

    /// Whether this loop runs the main dispatch queue (it is ``main``).
    public var runsMainQueue: Bool { mainQueue != nil }

    private func attachMainQueue() throws(MainLoopError) {
        let handle = CLinux_main_queue_handle()
        guard handle >= 0 else { throw .system(operation: "_dispatch_get_main_queue_handle_4CF", errno: EBADF) }
        let link = MainQueueLink(handle: handle)
        link.source = try addFileDescriptor(handle, interest: .read, priority: .app, owner: self) { loop, _ in
            loop.mainQueueSignalled()
        }
        mainQueue = link
    }

    /// libdispatch wrote the eventfd: reset it, then run the queue (or,
    /// while held, note it for the holder).
    private func mainQueueSignalled() {
        guard let link = mainQueue else { return }
        var value: UInt64 = 0
        _ = read(link.handle, &value, 8)
        if let onReady = link.onReadyWhileHeld {
            link.signalsWhileHeld &+= 1
            if !link.readyWhileHeld {
                link.readyWhileHeld = true
                onReady()
            }
            return
        }
        CLinux_drain_main_queue()
    }

    /// Holds the main queue: `DispatchQueue.main` blocks and `@MainActor`
    /// jobs that become ready wait until ``releaseMainQueue(drainNow:)``; the first
    /// time work becomes ready during the hold, `onReady` is called (on the
    /// loop thread). An app holds it while suspended. A second hold replaces
    /// the first one's `onReady`.
    /// - Precondition: on the loop thread of ``main``.
    public func holdMainQueue(onReady: @escaping () -> Void) {
        preconditionInLoop()
        guard let link = mainQueue else { preconditionFailure("holdMainQueue: only MainRunLoop.main runs the main queue") }
        link.onReadyWhileHeld = onReady
    }

    /// Ends a hold. What waits in the main queue runs now (`drainNow`) or
    /// as app-priority work after the current callback.
    /// - Precondition: on the loop thread of ``main``.
    public func releaseMainQueue(drainNow: Bool) {
        preconditionInLoop()
        guard let link = mainQueue else { preconditionFailure("releaseMainQueue: only MainRunLoop.main runs the main queue") }
        guard link.onReadyWhileHeld != nil else { return }
        link.onReadyWhileHeld = nil
        link.readyWhileHeld = false
        if drainNow {
            CLinux_drain_main_queue()
        } else {
            // Cannot fail: this loop is running the caller.
            try? executeInLoop { CLinux_drain_main_queue() }
        }
    }

    /// Whether the main queue is held.
    public var isMainQueueHeld: Bool { mainQueue?.onReadyWhileHeld != nil }

    /// Runs what the main queue holds now, on this (the main) thread, held
    /// or not: the resume sequence of a suspended app uses it to run the
    /// queue's work in FIFO order with its deferred work. Does nothing
    /// inside a main-queue block (the queue is already being drained).
    /// - Precondition: on the loop thread of ``main``.
    public func drainMainQueue() {
        preconditionInLoop()
        guard mainQueue != nil else { preconditionFailure("drainMainQueue: only MainRunLoop.main runs the main queue") }
        CLinux_drain_main_queue()
    }
}
