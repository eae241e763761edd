import Dispatch
import Glibc

/// A thread that owns and runs a ``MainRunLoop`` until stopped.
///
/// `LoopThread.start()` returns once the loop exists; `stopAndJoin()` stops
/// the loop, waits for the thread, and the loop is shut down on its own
/// thread before the thread exits.
public final class LoopThread: @unchecked Sendable {
    /// The loop this thread runs.
    public let loop: MainRunLoop
    private let thread: pthread_t

    private final class StartBox: @unchecked Sendable {
        let ready = DispatchSemaphore(value: 0)
        var result: Result<MainRunLoop, MainLoopError>?
    }

    private init(loop: MainRunLoop, thread: pthread_t) {
        self.loop = loop
        self.thread = thread
    }

    /// Starts a thread, creates a real-clock loop on it, and runs it.
    public static func start() throws(MainLoopError) -> LoopThread {
        let box = StartBox()
        var thread = pthread_t()
        let context = Unmanaged.passRetained(box).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<StartBox>.fromOpaque(raw!).takeRetainedValue()
            let loop: MainRunLoop
            do throws(MainLoopError) {
                loop = try MainRunLoop()
            } catch {
                box.result = .failure(error)
                box.ready.signal()
                return nil
            }
            box.result = .success(loop)
            box.ready.signal()
            try? loop.run()
            try? loop.runUntilIdle()
            try? loop.shutdown()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<StartBox>.fromOpaque(context).release()
            throw .system(operation: "pthread_create", errno: status)
        }
        box.ready.wait()
        switch box.result! {
        case .success(let loop): return LoopThread(loop: loop, thread: thread)
        case .failure(let error):
            pthread_join(thread, nil)
            throw error
        }
    }

    /// Stops the loop and waits for the thread to finish.
    public func stopAndJoin() {
        try? loop.stop()
        pthread_join(thread, nil)
    }
}
